#include "axes.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

namespace scanlab::bench {

static std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string::size_type start = 0;
  while (true) {
    auto end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return parts;
}

static std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

[[noreturn]] static void bad(const std::string& flag, const std::string& item, const std::string& why) {
  throw std::invalid_argument(flag + ": '" + item + "' " + why);
}

static std::int64_t parse_int(const std::string& flag, const std::string& item, const std::string& text) {
  if (text.empty()) bad(flag, item, "has an empty number");
  for (char c : text)
    if (c < '0' || c > '9') bad(flag, item, "is not a positive integer, a list a,b,c or a range a:b:xK / a:b:+S");
  errno = 0;
  const long long v = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE) bad(flag, item, "is too large");
  return v;
}

std::vector<std::int64_t> parse_int_axis(const std::string& flag, const std::string& text) {
  constexpr std::size_t kMaxValues = 10000;
  std::vector<std::int64_t> values;
  std::set<std::int64_t> seen;
  const auto add = [&](const std::string& item, std::int64_t v) {
    if (v <= 0) bad(flag, item, "must be positive");
    if (!seen.insert(v).second) bad(flag, item, "repeats the value " + std::to_string(v));
    values.push_back(v);
    if (values.size() > kMaxValues) bad(flag, item, "gives more than " + std::to_string(kMaxValues) + " values");
  };
  if (trim(text).empty()) throw std::invalid_argument(flag + ": needs at least one value");
  for (const auto& raw : split(text, ',')) {
    const std::string item = trim(raw);
    if (item.empty()) bad(flag, text, "has an empty item (two commas, or a trailing comma?)");
    const auto parts = split(item, ':');
    if (parts.size() == 1) {
      add(item, parse_int(flag, item, item));
      continue;
    }
    if (parts.size() > 3) bad(flag, item, "has too many ':' (a range is a:b, a:b:xK or a:b:+S)");
    const std::int64_t first = parse_int(flag, item, parts[0]), last = parse_int(flag, item, parts[1]);
    if (first <= 0) bad(flag, item, "must start at a positive value");
    if (first > last) bad(flag, item, "runs backwards (start > end)");
    char mode = '+';
    std::int64_t step = 1;
    if (parts.size() == 3) {
      if (parts[2].empty() || (parts[2][0] != 'x' && parts[2][0] != '+'))
        bad(flag, item, "has a step that is neither xK (multiply) nor +S (add)");
      mode = parts[2][0];
      step = parse_int(flag, item, parts[2].substr(1));
      if (mode == 'x' && step < 2) bad(flag, item, "multiplies by less than 2");
      if (mode == '+' && step < 1) bad(flag, item, "adds less than 1");
    }
    for (std::int64_t v = first; v <= last;) {
      add(item, v);
      if (mode == 'x') {
        if (v > std::numeric_limits<std::int64_t>::max() / step) break;
        v *= step;
      } else {
        if (v > std::numeric_limits<std::int64_t>::max() - step) break;
        v += step;
      }
    }
  }
  return values;
}

std::vector<bool> parse_switch_axis(const std::string& flag, const std::string& text) {
  std::vector<bool> values;
  if (trim(text).empty()) throw std::invalid_argument(flag + ": needs at least one value (on, off or on,off)");
  for (const auto& raw : split(text, ',')) {
    const std::string item = trim(raw);
    bool v;
    if (item == "on" || item == "true" || item == "1" || item == "yes") v = true;
    else if (item == "off" || item == "false" || item == "0" || item == "no") v = false;
    else bad(flag, item, "is not on/off (or true/false, 1/0, yes/no)");
    if (std::find(values.begin(), values.end(), v) != values.end()) bad(flag, item, "repeats a value");
    values.push_back(v);
  }
  return values;
}

std::vector<std::string> parse_choice_axis(const std::string& flag, const std::string& text,
                                           const std::vector<std::string>& allowed) {
  std::vector<std::string> values;
  if (trim(text).empty()) throw std::invalid_argument(flag + ": needs at least one value");
  for (const auto& raw : split(text, ',')) {
    const std::string item = trim(raw);
    if (std::find(allowed.begin(), allowed.end(), item) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      bad(flag, item, "is not one of " + list);
    }
    if (std::find(values.begin(), values.end(), item) != values.end()) bad(flag, item, "repeats a value");
    values.push_back(item);
  }
  return values;
}

std::string to_string(Direction direction) {
  switch (direction) {
    case Direction::fwd: return "fwd";
    case Direction::bwd: return "bwd";
    case Direction::fwdbwd: return "fwdbwd";
  }
  return "?";
}

std::vector<Direction> parse_directions(const std::string& text) {
  std::vector<Direction> out;
  for (const auto& name : parse_choice_axis("--direction", text, {"fwd", "bwd", "fwdbwd"}))
    out.push_back(name == "fwd" ? Direction::fwd : name == "bwd" ? Direction::bwd : Direction::fwdbwd);
  return out;
}

static std::string value_text(const std::string& name, const nlohmann::json& v) {
  if (v.is_boolean()) return v.get<bool>() ? "on" : "off";
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  if (v.is_string()) return v.get<std::string>();
  throw std::invalid_argument("case axis '" + name + "' has a value that is not an integer, switch or name: " + v.dump());
}

std::string case_key(const std::string& op, const std::string& direction, const nlohmann::json& shape,
                     const nlohmann::json& options) {
  std::map<std::string, std::string> all;  // byte order of names
  for (const auto* part : {&shape, &options})
    for (auto it = part->begin(); it != part->end(); ++it)
      if (!all.emplace(it.key(), value_text(it.key(), it.value())).second)
        throw std::invalid_argument("case axis '" + it.key() + "' is both a shape and an option");
  std::string key = op + "/" + direction + "/";
  bool first = true;
  for (const auto& [name, text] : all) {
    key += (first ? "" : ",") + name + "=" + text;
    first = false;
  }
  return key;
}

std::string SweepCase::key() const { return case_key(op, to_string(direction), shape, options); }

std::vector<SweepCase> expand_cases(const std::string& op, const std::vector<Direction>& directions,
                                    const std::vector<AxisValues>& axes, std::size_t max_cases) {
  if (directions.empty()) throw std::invalid_argument("a sweep needs at least one direction");
  std::size_t total = directions.size();
  for (const auto& axis : axes) {
    if (axis.values.empty()) throw std::invalid_argument("axis '" + axis.name + "' has no values");
    if (total > max_cases / axis.values.size())
      throw std::invalid_argument("the sweep has more than " + std::to_string(max_cases) + " cases; narrow an axis");
    total *= axis.values.size();
  }
  std::vector<SweepCase> cases;
  cases.reserve(total);
  std::vector<std::size_t> index(axes.size(), 0);
  while (true) {
    for (auto direction : directions) {
      SweepCase c;
      c.op = op;
      c.direction = direction;
      for (std::size_t a = 0; a < axes.size(); ++a) {
        const auto& value = axes[a].values[index[a]];
        if (axes[a].zipped.empty()) {
          (axes[a].is_shape ? c.shape : c.options)[axes[a].name] = value;
          continue;
        }
        if (!value.is_array() || value.size() != axes[a].zipped.size())
          throw std::invalid_argument("axis '" + axes[a].name + "' has a value that does not give every one of its " +
                                      std::to_string(axes[a].zipped.size()) + " sizes: " + value.dump());
        for (std::size_t k = 0; k < axes[a].zipped.size(); ++k) c.shape[axes[a].zipped[k]] = value[k];
      }
      cases.push_back(std::move(c));
    }
    // Odometer: the last axis turns fastest.
    std::size_t a = axes.size();
    while (a > 0) {
      --a;
      if (++index[a] < axes[a].values.size()) break;
      index[a] = 0;
      if (a == 0) return cases;
    }
    if (axes.empty()) return cases;
  }
}

std::vector<nlohmann::json> parse_shapes(const std::string& flag, const std::string& text,
                                         const std::vector<std::string>& names) {
  std::string order;
  for (const auto& n : names) order += (order.empty() ? "" : "x") + n;
  std::vector<nlohmann::json> shapes;
  if (trim(text).empty()) throw std::invalid_argument(flag + ": needs at least one shape " + order);
  for (const auto& raw : split(text, ',')) {
    const std::string item = trim(raw);
    const auto parts = split(item, 'x');
    if (parts.size() != names.size())
      bad(flag, item, "has " + std::to_string(parts.size()) + " sizes; a shape is " + order);
    nlohmann::json shape = nlohmann::json::array();
    for (const auto& part : parts) {
      const std::int64_t v = parse_int(flag, item, trim(part));
      if (v <= 0) bad(flag, item, "has a size that is not positive");
      shape.push_back(v);
    }
    for (const auto& seen : shapes)
      if (seen == shape) bad(flag, item, "repeats a shape");
    shapes.push_back(shape);
  }
  return shapes;
}

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  const auto fail = [&](const std::string& why) {
    throw std::invalid_argument("--shard: '" + text + "' " + why + " (expected i/n with 0 <= i < n, e.g. 0/4)");
  };
  if (slash == std::string::npos) fail("has no '/'");
  const std::string a = trim(text.substr(0, slash)), b = trim(text.substr(slash + 1));
  if (a.empty() || b.empty()) fail("is missing a number");
  for (char c : a + b)
    if (c < '0' || c > '9') fail("is not two non-negative integers");
  if (a.size() > 6 || b.size() > 6) fail("is too large");
  Shard s{std::stoi(a), std::stoi(b)};
  if (s.count < 1) fail("has n < 1");
  if (s.index >= s.count) fail("has i >= n");
  return s;
}

std::vector<SweepCase> shard_cases(const std::vector<SweepCase>& cases, Shard shard) {
  if (shard.count < 1 || shard.index < 0 || shard.index >= shard.count)
    throw std::invalid_argument("shard " + std::to_string(shard.index) + "/" + std::to_string(shard.count) +
                                " is out of range");
  std::vector<SweepCase> mine;
  for (std::size_t k = 0; k < cases.size(); ++k)
    if (k % std::size_t(shard.count) == std::size_t(shard.index)) mine.push_back(cases[k]);
  return mine;
}

}  // namespace scanlab::bench
