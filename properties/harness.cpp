#include "harness.hpp"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <rapidcheck/detail/Configuration.h>

namespace fs = std::filesystem;

namespace scanlab::properties {

// ---------------------------------------------------------------------------------------------
// Coverage

void Coverage::require(const std::string& tag) {
  std::lock_guard<std::mutex> lock(mutex_);
  required_.insert(tag);
}
void Coverage::require(const std::vector<std::string>& tags) {
  for (const auto& t : tags) require(t);
}
void Coverage::offer(const std::string& tag) { require(tag); }
void Coverage::hit(const std::string& tag) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++hits_[tag];
}
void Coverage::hit(const std::vector<std::string>& tags) {
  for (const auto& t : tags) hit(t);
}
int Coverage::count(const std::string& tag) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = hits_.find(tag);
  return it == hits_.end() ? 0 : it->second;
}
std::vector<std::string> Coverage::missing() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  for (const auto& t : required_)
    if (!hits_.count(t)) out.push_back(t);
  return out;
}
std::string Coverage::report() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::set<std::string> all(required_);
  for (const auto& [t, n] : hits_) all.insert(t);
  std::ostringstream s;
  int column = 0;
  for (const auto& t : all) {
    auto it = hits_.find(t);
    const int n = it == hits_.end() ? 0 : it->second;
    char cell[96];
    std::snprintf(cell, sizeof cell, "%s%s=%d", required_.count(t) ? "" : "~", t.c_str(), n);
    s << (column ? "  " : "    ") << cell;
    if (++column == 4) {
      s << "\n";
      column = 0;
    }
  }
  if (column) s << "\n";
  return s.str();
}

// ---------------------------------------------------------------------------------------------
// Failure capture

namespace {
std::mutex failure_mutex;
std::optional<FailureRecord> failure;
}  // namespace

void record_failure(FailureRecord record) {
  std::lock_guard<std::mutex> lock(failure_mutex);
  failure = std::move(record);
}
void clear_failure() {
  std::lock_guard<std::mutex> lock(failure_mutex);
  failure.reset();
}
std::optional<FailureRecord> last_failure() {
  std::lock_guard<std::mutex> lock(failure_mutex);
  return failure;
}

std::string save_failure(const FailureRecord& record, std::uint64_t seed, const std::string& reproduce_line) {
  std::string prefix = record.c.op + "-" + record.property;
  for (auto& ch : prefix)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_') ch = '_';
  const std::string dir = cli::fresh_failure_dir(prefix);
  io::Case c = record.c;
  c.options["seed"] = seed;
  std::string note = "failing case of " + record.property + " on " + record.backend + ", shrunk by RapidCheck";
  if (c.options.contains("note") && c.options["note"].is_string()) note += "; " + c.options["note"].get<std::string>();
  if (!reproduce_line.empty()) note += "; reproduce: " + reproduce_line;
  c.options["note"] = note;
  // Outputs go where `scanlab run` would put them: out-BACKEND/, out-exec/ for exec:CMD.
  const std::string out_name = record.backend.rfind("exec:", 0) == 0 ? "exec" : record.backend;
  cli::save_case_dir(dir, c, record.config, &record.got, out_name);
  std::ofstream report(fs::path(dir) / "failure.txt");
  report << record.property << " on " << record.backend << "\n" << record.message << "\n";
  return dir;
}

void fail_case(FailureRecord record) {
  std::string message = record.message;
  record_failure(std::move(record));
  RC_FAIL(message);
}

void require_within(const TensorMap& got, const TensorMap& expected, const TensorMap& bounds, FailureRecord context,
                    const std::string& what) {
  const auto rows = reference::compare_with_bounds(got, expected, bounds);
  if (reference::all_pass(rows)) return;
  context.message = what + " on " + context.backend + (context.config.is_null() ? "" : " " + context.config.dump()) +
                    ":\n" + reference::describe(rows);
  fail_case(std::move(context));
}

std::string current_test_name() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return info ? std::string(info->test_suite_name()) + "." + info->name() : "property";
}

namespace {
rc::detail::TestListener* listener_override = nullptr;
}

ScopedPropertyListener::ScopedPropertyListener(rc::detail::TestListener* listener) : previous_(listener_override) {
  listener_override = listener;
}
ScopedPropertyListener::~ScopedPropertyListener() { listener_override = previous_; }

void run_property(Coverage& coverage, const std::function<void()>& property, rc::detail::TestListener* listener) {
  using namespace rc::detail;
  if (!listener) listener = listener_override;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description = info->name();
  TestParams params = configuration().testParams;
  const char* env = std::getenv("RC_PARAMS");
  if (!env || !std::strstr(env, "max_success")) params.maxSuccess = kDefaultCases;
  clear_failure();
  const TestResult result = listener ? checkProperty(toProperty(property), metadata, params, *listener)
                                     : checkProperty(toProperty(property), metadata, params);
  std::ostringstream message;
  printResultMessage(result, message);
  if (result.is<FailureResult>()) {
    const auto& f = result.get<FailureResult>();
    Configuration reproduce_config;
    reproduce_config.reproduce[metadata.id] = f.reproduce;
    std::string reproduce = configToMinimalString(reproduce_config);
    if (auto pos = reproduce.find(" seed="); pos != std::string::npos) reproduce.erase(pos);
    const std::string reproduce_line =
        "RC_PARAMS=\"" + reproduce + "\" scanlab test --gtest_filter=" + current_test_name();
    std::string saved = "(no case was recorded: the failure came from outside the harness's checks)";
    if (auto record = last_failure()) {
      const std::string dir = save_failure(*record, params.seed, reproduce_line);
      saved = dir + "\n  replay: scanlab replay " + dir + (record->backend == "reference" ? "" : " --backend " + record->backend);
      if (!record->config.is_null()) saved += "   (uses " + dir + "/config.json)";
    }
    FAIL() << message.str() << "\nminimal failing case saved: " << saved << "\n  reproduce: " << reproduce_line;
    return;
  }
  if (!result.is<SuccessResult>()) {
    FAIL() << message.str() << "\ncoverage:\n" << coverage.report();
    return;
  }
  const auto& success = result.get<SuccessResult>();
  std::cout << message.str() << "\ncoverage (~ = counted, not required):\n" << coverage.report() << std::flush;
  if (success.numSuccess < kCoverageMinCases && !coverage.assert_at_any_count) {
    std::cout << "coverage not asserted: " << success.numSuccess << " cases < " << kCoverageMinCases << "\n";
    return;
  }
  const auto missing = coverage.missing();
  EXPECT_TRUE(missing.empty()) << "coverage: never drawn in " << success.numSuccess << " cases: " << join(missing, ", ")
                               << "\n" << coverage.report();
}

// ---------------------------------------------------------------------------------------------
// Configs

namespace {

// The distinct values the configs hold for `field`, in first-seen order.
std::vector<nlohmann::json> distinct_values(const std::vector<nlohmann::json>& configs, const std::string& field) {
  std::vector<nlohmann::json> values;
  for (const auto& j : configs)
    if (j.contains(field) && std::find(values.begin(), values.end(), j[field]) == values.end())
      values.push_back(j[field]);
  return values;
}

}  // namespace

rc::Gen<nlohmann::json> gen_from_pool(std::vector<nlohmann::json> pool, std::vector<std::string> order,
                                      PoolMixing mixing) {
  return rc::gen::exec([pool, order, mixing] {
    std::vector<nlohmann::json> remaining = pool;
    for (const auto& field : order) {
      const std::vector<nlohmann::json> values = distinct_values(remaining, field);
      if (values.size() <= 1) continue;
      const auto& chosen = values[*gen_index(values.size())];
      std::vector<nlohmann::json> kept;
      for (const auto& j : remaining)
        if (j.contains(field) && j[field] == chosen) kept.push_back(j);
      remaining = std::move(kept);
    }
    nlohmann::json chosen = remaining.front();
    for (const auto& field : mixing.fields) {
      if (!chosen.contains(field) || !*gen_bool()) continue;
      const std::vector<nlohmann::json> values = distinct_values(pool, field);
      if (values.size() <= 1) continue;
      nlohmann::json mixed = chosen;
      mixed[field] = values[*gen_index(values.size())];
      if (mixing.valid(mixed)) chosen = std::move(mixed);
    }
    return chosen;
  });
}

// ---------------------------------------------------------------------------------------------
// Tensor helpers

std::map<std::string, int> axes_that_change(const std::vector<TensorSpec>& a, const std::vector<TensorSpec>& b) {
  std::map<std::string, int> axes;
  for (const auto& sa : a)
    for (const auto& sb : b) {
      if (sa.name != sb.name || sa.shape.size() != sb.shape.size()) continue;
      int changed = -1;
      for (std::size_t i = 0; i < sa.shape.size(); ++i) {
        if (sa.shape[i] == sb.shape[i]) continue;
        if (changed >= 0)
          throw std::logic_error("tensor '" + sa.name + "' changes along two axes with one dimension");
        changed = static_cast<int>(i);
      }
      if (changed >= 0) axes[sa.name] = changed;
    }
  return axes;
}

namespace {
struct Split {
  std::int64_t outer = 1, extent = 1, inner = 1;
};
Split split_at(const Shape& shape, int axis) {
  Split s;
  for (int i = 0; i < static_cast<int>(shape.size()); ++i) {
    if (i < axis) s.outer *= shape[i];
    else if (i == axis) s.extent = shape[i];
    else s.inner *= shape[i];
  }
  return s;
}
}  // namespace

Tensor slice_axis(const Tensor& t, int axis, std::int64_t begin, std::int64_t end) {
  const Split s = split_at(t.shape, axis);
  Shape shape = t.shape;
  shape[axis] = end - begin;
  Tensor out(shape);
  std::int64_t k = 0;
  for (std::int64_t o = 0; o < s.outer; ++o)
    for (std::int64_t i = begin; i < end; ++i)
      for (std::int64_t n = 0; n < s.inner; ++n) out[k++] = t[(o * s.extent + i) * s.inner + n];
  return out;
}

Tensor concat_axis(const Tensor& a, const Tensor& b, int axis) {
  const Split sa = split_at(a.shape, axis), sb = split_at(b.shape, axis);
  Shape shape = a.shape;
  shape[axis] = a.shape[axis] + b.shape[axis];
  Tensor out(shape);
  std::int64_t k = 0;
  for (std::int64_t o = 0; o < sa.outer; ++o) {
    for (std::int64_t i = 0; i < sa.extent * sa.inner; ++i) out[k++] = a[o * sa.extent * sa.inner + i];
    for (std::int64_t i = 0; i < sb.extent * sb.inner; ++i) out[k++] = b[o * sb.extent * sb.inner + i];
  }
  return out;
}

Tensor permute_axis(const Tensor& t, int axis, const std::vector<std::int64_t>& order) {
  const Split s = split_at(t.shape, axis);
  Tensor out(t.shape);
  for (std::int64_t o = 0; o < s.outer; ++o)
    for (std::int64_t i = 0; i < s.extent; ++i)
      for (std::int64_t n = 0; n < s.inner; ++n)
        out[(o * s.extent + i) * s.inner + n] = t[(o * s.extent + order[static_cast<std::size_t>(i)]) * s.inner + n];
  return out;
}

Tensor add(const Tensor& a, const Tensor& b) {
  if (a.shape != b.shape) throw std::logic_error("add: shapes " + shape_string(a.shape) + " and " + shape_string(b.shape));
  Tensor out = a;
  for (std::int64_t i = 0; i < a.numel(); ++i) out[i] += b[i];
  return out;
}

TensorMap scaled(const TensorMap& bounds, double factor) {
  TensorMap out = bounds;
  for (auto& [name, t] : out)
    for (auto& v : t.values) v *= factor;
  return out;
}

TensorMap restrict_to(const TensorMap& m, const std::vector<std::string>& names) {
  TensorMap out;
  for (const auto& n : names)
    if (const Tensor* t = find(m, n)) out[n] = *t;
  return out;
}

std::string bitwise_difference(const TensorMap& a, const TensorMap& b) {
  std::set<std::string> names;
  for (const auto& [n, t] : a) names.insert(n);
  for (const auto& [n, t] : b) names.insert(n);
  for (const auto& n : names) {
    const Tensor* x = find(a, n);
    const Tensor* y = find(b, n);
    if (!x || !y) return "'" + n + "' is missing from one run";
    if (x->shape != y->shape) return "'" + n + "' has shapes " + shape_string(x->shape) + " and " + shape_string(y->shape);
    for (std::int64_t i = 0; i < x->numel(); ++i) {
      if (std::memcmp(&x->values[static_cast<std::size_t>(i)], &y->values[static_cast<std::size_t>(i)], sizeof(double)) != 0) {
        char text[160];
        std::snprintf(text, sizeof text, "%s[%lld]: %.9g vs %.9g", n.c_str(), static_cast<long long>(i), (*x)[i], (*y)[i]);
        return text;
      }
    }
  }
  return "";
}

double f32(double v) { return static_cast<double>(static_cast<float>(v)); }

double ulp32(double v) {
  const float f = static_cast<float>(std::fabs(v));
  return static_cast<double>(std::nextafter(f, std::numeric_limits<float>::infinity())) - static_cast<double>(f);
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

}  // namespace scanlab::properties
