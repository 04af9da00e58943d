// Sweep axes on the command line (DESIGN.md's CLI table): every axis is a list ("1,2,4") or a
// range ("1024:8192:x2" multiplies, "16:64:+16" adds, "a:b" steps by one), lists and ranges
// mixed freely ("8,1024:4096:x2"). Switches take on/off lists ("on,off"). The cases of a sweep
// are the cartesian product of its axes and directions, in a fixed order, and each has one key
// string that names it in every file (sweep JSON, merge, compare, reports, peer runners).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace scanlab::bench {

// Each parser throws std::invalid_argument naming the flag and the bad item.
std::vector<std::int64_t> parse_int_axis(const std::string& flag, const std::string& text);
std::vector<bool> parse_switch_axis(const std::string& flag, const std::string& text);  // on/off, true/false, 1/0, yes/no
std::vector<std::string> parse_choice_axis(const std::string& flag, const std::string& text,
                                           const std::vector<std::string>& allowed);

// fwd: the forward alone; bwd: the backward alone (after an untimed forward that leaves what the
// backward reads); fwdbwd: both, timed together.
enum class Direction { fwd, bwd, fwdbwd };
std::string to_string(Direction direction);
std::vector<Direction> parse_directions(const std::string& text);

// One value of every axis of a sweep. shape holds the size axes (batch, dim, dstate, seqlen,
// groups), options the op's switches and choices (z, D, delta_bias, softplus, act_fn, ...).
struct SweepCase {
  std::string op;
  Direction direction = Direction::fwd;
  nlohmann::json shape = nlohmann::json::object();
  nlohmann::json options = nlohmann::json::object();
  std::string key() const;  // case_key(op, direction, shape, options)
};

// "op/direction/name=value,..." over shape and options together, names in byte order; integers
// in decimal, booleans "on"/"off", strings as they are. reports/scanlab_report.py's case_key()
// is the same function; a test checks that they agree.
std::string case_key(const std::string& op, const std::string& direction, const nlohmann::json& shape,
                     const nlohmann::json& options);

// An axis and its parsed values (as JSON numbers, booleans or strings). A zipped axis sets
// several size axes together: each value is an array with one entry per name in `zipped`
// (--shapes 8x4096x16x2048,2x4096x16x8192 lists shapes instead of a product of sizes).
struct AxisValues {
  std::string name;  // the JSON name: "batch", "delta_bias", "act_fn"; "shapes" for a zipped axis
  bool is_shape = false;
  std::vector<nlohmann::json> values;
  std::vector<std::string> zipped;
};

// --shapes: comma-separated tuples "AxBxC..." with one positive integer per name, in order.
std::vector<nlohmann::json> parse_shapes(const std::string& flag, const std::string& text,
                                         const std::vector<std::string>& names);

// The cartesian product: the first axis varies slowest and the direction fastest, so the cases
// of one shape run next to each other. Refuses products above max_cases.
std::vector<SweepCase> expand_cases(const std::string& op, const std::vector<Direction>& directions,
                                    const std::vector<AxisValues>& axes, std::size_t max_cases = 100000);

// --shard i/n, 0 <= i < n: case k belongs to shard k mod n (round robin, so big and small shapes
// spread evenly); the n shards together hold every case exactly once.
struct Shard {
  int index = 0, count = 1;
};
Shard parse_shard(const std::string& text);
std::vector<SweepCase> shard_cases(const std::vector<SweepCase>& cases, Shard shard);

}  // namespace scanlab::bench
