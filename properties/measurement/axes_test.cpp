// Sweep axes (lists, ranges, switches, choices, bad input), case expansion and keys, and the
// shard split: every case lands in exactly one shard, whatever the case count and shard count.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <set>

#include "benchmarks/axes.hpp"

using namespace scanlab::bench;
using Ints = std::vector<std::int64_t>;

TEST(MeasurementAxes, ListsAndRanges) {
  EXPECT_EQ(parse_int_axis("--dim", "1,2,4"), (Ints{1, 2, 4}));
  EXPECT_EQ(parse_int_axis("--seqlen", "1024:8192:x2"), (Ints{1024, 2048, 4096, 8192}));
  EXPECT_EQ(parse_int_axis("--seqlen", "1000:8000:x2"), (Ints{1000, 2000, 4000, 8000}));
  EXPECT_EQ(parse_int_axis("--seqlen", "1000:9000:x3"), (Ints{1000, 3000, 9000}));
  EXPECT_EQ(parse_int_axis("--dstate", "16:64:+16"), (Ints{16, 32, 48, 64}));
  EXPECT_EQ(parse_int_axis("--dstate", "16:60:+16"), (Ints{16, 32, 48}));  // the end is a bound, not a value
  EXPECT_EQ(parse_int_axis("--batch", "3:5"), (Ints{3, 4, 5}));
  EXPECT_EQ(parse_int_axis("--batch", "7:7:x2"), (Ints{7}));
  EXPECT_EQ(parse_int_axis("--dim", " 8 , 1024:4096:x2 "), (Ints{8, 1024, 2048, 4096}));
  EXPECT_EQ(parse_int_axis("--dim", "4096"), (Ints{4096}));
}

TEST(MeasurementAxes, BadIntegerAxesNameTheFlagAndTheItem) {
  const std::map<std::string, std::string> bad = {
      {"", "needs at least one value"},  {"0", "positive"},          {"-1", "not a positive integer"},
      {"a", "not a positive integer"},   {"1.5", "not a positive integer"}, {"1,,2", "empty item"},
      {"1,", "empty item"},              {"4:2", "backwards"},        {"0:4", "positive"},
      {"1:8:x1", "less than 2"},         {"1:8:+0", "less than 1"},   {"1:8:y2", "neither"},
      {"1:8:", "neither"},               {"1:2:3:4", "too many"},     {"2,2", "repeats"},
      {"1:4,4", "repeats"},              {"1:100000:+1", "more than"}, {"99999999999999999999", "too large"},
      {":4", "empty number"},
  };
  for (const auto& [text, fragment] : bad) {
    SCOPED_TRACE("'" + text + "'");
    try {
      parse_int_axis("--seqlen", text);
      ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("--seqlen"), std::string::npos) << what;
      EXPECT_NE(what.find(fragment), std::string::npos) << what;
    }
  }
}

TEST(MeasurementAxes, RangesNeverOverflow) {
  const auto v = parse_int_axis("--dim", "4611686018427387904:9223372036854775807:x2");
  EXPECT_EQ(v, (Ints{4611686018427387904LL}));
  const auto w = parse_int_axis("--dim", "9223372036854775806:9223372036854775807:+5");
  EXPECT_EQ(w, (Ints{9223372036854775806LL}));
}

TEST(MeasurementAxes, SwitchesAndChoices) {
  EXPECT_EQ(parse_switch_axis("--z", "on,off"), (std::vector<bool>{true, false}));
  EXPECT_EQ(parse_switch_axis("--z", "false"), (std::vector<bool>{false}));
  EXPECT_EQ(parse_switch_axis("--z", "yes,0"), (std::vector<bool>{true, false}));
  EXPECT_THROW(parse_switch_axis("--z", "maybe"), std::invalid_argument);
  EXPECT_THROW(parse_switch_axis("--z", "on,1"), std::invalid_argument);
  EXPECT_THROW(parse_switch_axis("--z", ""), std::invalid_argument);
  EXPECT_EQ(parse_choice_axis("--act-fn", "silu,gelu_erf", {"silu", "gelu_erf"}),
            (std::vector<std::string>{"silu", "gelu_erf"}));
  EXPECT_THROW(parse_choice_axis("--act-fn", "relu", {"silu"}), std::invalid_argument);
  EXPECT_EQ(parse_directions("fwd,bwd,fwdbwd").size(), 3u);
  EXPECT_THROW(parse_directions("forward"), std::invalid_argument);
}

TEST(MeasurementAxes, CaseKeysAreCanonical) {
  const nlohmann::json shape = {{"seqlen", 2048}, {"batch", 8}};
  const nlohmann::json options = {{"z", true}, {"act_fn", "silu"}, {"D", false}};
  EXPECT_EQ(case_key("selective_scan", "fwd", shape, options),
            "selective_scan/fwd/D=off,act_fn=silu,batch=8,seqlen=2048,z=on");
  EXPECT_THROW(case_key("x", "fwd", {{"a", 1}}, {{"a", true}}), std::invalid_argument);
  EXPECT_THROW(case_key("x", "fwd", {{"a", 1.5}}, nlohmann::json::object()), std::invalid_argument);
}

TEST(MeasurementAxes, ExpansionOrderAndCount) {
  std::vector<AxisValues> axes = {{"batch", true, {1, 2}}, {"seqlen", true, {64, 128, 256}}, {"z", false, {true, false}}};
  const auto cases = expand_cases("selective_scan", {Direction::fwd, Direction::bwd}, axes);
  ASSERT_EQ(cases.size(), 2u * 3u * 2u * 2u);
  // The direction turns fastest, then the last axis; the first axis slowest.
  EXPECT_EQ(cases[0].direction, Direction::fwd);
  EXPECT_EQ(cases[1].direction, Direction::bwd);
  EXPECT_EQ(cases[0].options["z"], true);
  EXPECT_EQ(cases[2].options["z"], false);
  EXPECT_EQ(cases[4].shape["seqlen"], 128);
  EXPECT_EQ(cases.back().shape["batch"], 2);
  std::set<std::string> keys;
  for (const auto& c : cases) keys.insert(c.key());
  EXPECT_EQ(keys.size(), cases.size());
  EXPECT_THROW(expand_cases("x", {Direction::fwd}, {{"a", true, {1, 2, 3}}, {"b", true, {1, 2, 3}}}, 8),
               std::invalid_argument);
  EXPECT_EQ(expand_cases("x", {Direction::fwd}, {}).size(), 1u);
}

TEST(MeasurementAxes, ShardParsing) {
  EXPECT_EQ(parse_shard("0/1").count, 1);
  EXPECT_EQ(parse_shard("3/4").index, 3);
  for (const char* bad : {"4/4", "1", "a/2", "1/0", "-1/2", "/2", "1/", "1/2/3"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(parse_shard(bad), std::invalid_argument);
  }
}

RC_GTEST_PROP(MeasurementAxes, ShardsCoverEveryCaseExactlyOnce, ()) {
  const int batches = *rc::gen::inRange(1, 7);
  const int seqlens = *rc::gen::inRange(1, 6);
  const int shards = *rc::gen::inRange(1, 50);
  std::vector<nlohmann::json> b, l;
  for (int i = 1; i <= batches; ++i) b.push_back(i);
  for (int i = 1; i <= seqlens; ++i) l.push_back(64 * i);
  const auto all = expand_cases("s7_scan", {Direction::fwd, Direction::fwdbwd}, {{"batch", true, b}, {"seqlen", true, l}});
  std::map<std::string, int> seen;
  std::size_t total = 0;
  for (int i = 0; i < shards; ++i) {
    const auto mine = shard_cases(all, Shard{i, shards});
    total += mine.size();
    // Round robin: sizes differ by at most one.
    RC_ASSERT(mine.size() + 1 >= all.size() / std::size_t(shards));
    RC_ASSERT(mine.size() <= all.size() / std::size_t(shards) + 1);
    for (std::size_t k = 0; k < mine.size(); ++k) {
      ++seen[mine[k].key()];
      // Case k of shard i is case i + k*n of the sweep.
      RC_ASSERT(mine[k].key() == all[std::size_t(i) + k * std::size_t(shards)].key());
    }
  }
  RC_ASSERT(total == all.size());
  RC_ASSERT(seen.size() == all.size());
  for (const auto& [key, count] : seen) RC_ASSERT(count == 1);
}

TEST(MeasurementAxes, ShapeListsAreZippedNotMultiplied) {
  const std::vector<std::string> names = {"batch", "dim", "dstate", "seqlen"};
  const auto shapes = parse_shapes("--shapes", "8x4096x16x2048, 2x4096x16x8192", names);
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(shapes[1], nlohmann::json::array({2, 4096, 16, 8192}));
  AxisValues zipped{"shapes", true, shapes, names};
  const auto cases = expand_cases("selective_scan", {Direction::fwd, Direction::fwdbwd},
                                  {zipped, {"groups", true, {1}}, {"z", false, {true}}});
  ASSERT_EQ(cases.size(), 4u);  // 2 shapes x 2 directions, not 2^4 size combinations
  EXPECT_EQ(cases[2].shape["batch"], 2);
  EXPECT_EQ(cases[2].shape["seqlen"], 8192);
  EXPECT_EQ(cases[2].shape["groups"], 1);
  EXPECT_EQ(cases[0].key(), "selective_scan/fwd/batch=8,dim=4096,dstate=16,groups=1,seqlen=2048,z=on");
  for (const char* bad : {"", "8x4096x16", "8x4096x16x2048x1", "8x0x16x2048", "8xax16x2048", "1x1x1x1,1x1x1x1"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(parse_shapes("--shapes", bad, names), std::invalid_argument);
  }
}
