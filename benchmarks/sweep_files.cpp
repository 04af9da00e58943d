#include "sweep_files.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

namespace scanlab::bench {

nlohmann::json load_sweep_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) throw std::invalid_argument(path + ": not valid JSON");
  check_sweep_schema(j, path);
  return j;
}

void check_sweep_schema(const nlohmann::json& sweep, const std::string& what) {
  std::vector<std::string> problems;
  const auto need = [&](bool ok, const std::string& message) {
    if (!ok) problems.push_back(message);
  };
  need(sweep.is_object(), "the file is not a JSON object");
  if (!problems.empty()) throw std::invalid_argument(what + ": " + problems.front());
  const auto block_it = sweep.find("scanlab");
  need(block_it != sweep.end() && block_it->is_object(), "no \"scanlab\" context block");
  if (block_it != sweep.end() && block_it->is_object()) {
    const auto& b = *block_it;
    need(b.value("schema", std::string()) == "scanlab.sweep/1", "scanlab.schema is not \"scanlab.sweep/1\"");
    for (const char* key : {"implementation", "op"})
      need(b.contains(key) && b[key].is_string(), std::string("scanlab.") + key + " is missing or not a string");
    need(b.contains("machine") && b["machine"].is_object(), "scanlab.machine is missing");
  }
  const auto cases_it = sweep.find("cases");
  need(cases_it != sweep.end() && cases_it->is_array(), "no \"cases\" array");
  if (cases_it != sweep.end() && cases_it->is_array()) {
    std::set<std::string> keys;
    std::size_t index = 0;
    for (const auto& c : *cases_it) {
      const std::string where = "cases[" + std::to_string(index++) + "]";
      if (!c.is_object()) {
        problems.push_back(where + " is not an object");
        continue;
      }
      for (const char* key : {"key", "op", "direction", "implementation"})
        need(c.contains(key) && c[key].is_string(), where + "." + key + " is missing or not a string");
      for (const char* key : {"shape", "options"})
        need(c.contains(key) && c[key].is_object(), where + "." + key + " is missing or not an object");
      for (const char* key : {"bytes_moved", "flops", "sfu_ops"})
        need(c.contains(key) && c[key].is_number() && c[key].get<double>() >= 0,
             where + "." + key + " is missing or negative");
      if (c.contains("time_s")) {
        try {
          const Spread s = spread_from_json(c["time_s"]);
          need(s.min > 0, where + ".time_s has a non-positive time");
        } catch (const std::exception& e) {
          problems.push_back(where + ".time_s: " + e.what());
        }
      } else {
        problems.push_back(where + ".time_s is missing");
      }
      if (c.contains("key") && c["key"].is_string())
        need(keys.insert(c["key"].get<std::string>()).second, where + ": duplicate case " + c["key"].dump());
    }
  }
  if (problems.empty()) return;
  std::string text = what + ": not a scanlab sweep JSON:";
  for (std::size_t i = 0; i < problems.size() && i < 20; ++i) text += "\n  - " + problems[i];
  if (problems.size() > 20) text += "\n  - ... (" + std::to_string(problems.size() - 20) + " more)";
  throw std::invalid_argument(text);
}

std::vector<std::string> merge_context_fields() {
  return {"implementation", "op",          "machine.device", "machine.backend", "machine.kokkos_configuration",
          "machine.git_commit", "impl",    "config_override", "directions",     "axes",
          "repetitions",     "min_time_s", "iterations",     "seed",            "shard.count"};
}

static const nlohmann::json& field(const nlohmann::json& block, const std::string& dotted) {
  static const nlohmann::json missing;
  const nlohmann::json* node = &block;
  std::string::size_type start = 0;
  while (true) {
    const auto dot = dotted.find('.', start);
    const std::string part = dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node->is_object() || !node->contains(part)) return missing;
    node = &(*node)[part];
    if (dot == std::string::npos) return *node;
    start = dot + 1;
  }
}

nlohmann::json merge_sweeps(const std::vector<std::pair<std::string, nlohmann::json>>& files) {
  if (files.empty()) throw std::invalid_argument("merge needs at least one file");
  for (const auto& [name, j] : files) check_sweep_schema(j, name);
  const auto& first_name = files.front().first;
  const auto& first = files.front().second["scanlab"];
  for (std::size_t f = 1; f < files.size(); ++f) {
    const auto& block = files[f].second["scanlab"];
    for (const auto& key : merge_context_fields())
      if (field(block, key) != field(first, key))
        throw std::invalid_argument("cannot merge " + files[f].first + " with " + first_name + ": their " + key +
                                    " differ (" + field(first, key).dump() + " vs " + field(block, key).dump() + ")");
  }
  const int count = field(first, "shard.count").is_number() ? field(first, "shard.count").get<int>() : 1;
  // (global index, case), so cases come back in the sweep's own order.
  std::vector<std::pair<std::int64_t, nlohmann::json>> ordered;
  std::map<std::string, std::string> case_file;
  std::map<int, std::string> shard_file;
  nlohmann::json benchmarks = nlohmann::json::array(), merged_from = nlohmann::json::array();
  bool all_complete = true;
  for (const auto& [name, j] : files) {
    const auto& block = j["scanlab"];
    const int index = field(block, "shard.index").is_number() ? field(block, "shard.index").get<int>() : 0;
    if (!shard_file.emplace(index, name).second)
      throw std::invalid_argument("shard " + std::to_string(index) + "/" + std::to_string(count) + " is in both " +
                                  shard_file[index] + " and " + name);
    std::int64_t position = 0;
    for (const auto& c : j["cases"]) {
      const std::string key = c["key"].get<std::string>();
      if (!case_file.emplace(key, name).second)
        throw std::invalid_argument("case " + key + " is in both " + case_file[key] + " and " + name);
      ordered.emplace_back(std::int64_t(index) + position++ * count, c);
    }
    if (j.contains("benchmarks") && j["benchmarks"].is_array())
      for (const auto& b : j["benchmarks"]) benchmarks.push_back(b);
    const bool complete = block.value("complete", true);
    all_complete = all_complete && complete;
    nlohmann::json from = {{"file", name},
                           {"shard", block.value("shard", nlohmann::json::object())},
                           {"host", field(block, "machine.host")},
                           {"device", field(block, "machine.device")},
                           {"launch", field(block, "launch")},
                           {"date_utc", field(block, "machine.date_utc")},
                           {"complete", complete},
                           {"case_count", j["cases"].size()}};
    if (block.contains("ceilings") && block["ceilings"].is_object() && block["ceilings"].contains("roofline"))
      from["roofline"] = block["ceilings"]["roofline"];
    merged_from.push_back(from);
  }
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  nlohmann::json result = files.front().second;
  result["benchmarks"] = benchmarks;
  result["cases"] = nlohmann::json::array();
  for (auto& [index, c] : ordered) result["cases"].push_back(std::move(c));
  auto& block = result["scanlab"];
  std::vector<int> missing;
  for (int i = 0; i < count; ++i)
    if (!shard_file.count(i)) missing.push_back(i);
  block["shard"] = {{"index", nullptr}, {"count", count}, {"merged", nlohmann::json::array()}};
  for (const auto& [index, name] : shard_file) block["shard"]["merged"].push_back(index);
  block["merged_from"] = merged_from;
  block["missing_shards"] = missing;
  block["complete"] = all_complete && missing.empty();
  block["case_count"] = result["cases"].size();
  block.erase("error");
  return result;
}

static std::string text_of(const nlohmann::json& value) { return value.is_string() ? value.get<std::string>() : "?"; }

static std::string label_of(const nlohmann::json& sweep) {
  const auto& b = sweep["scanlab"];
  return text_of(field(b, "implementation")) + "@" + text_of(field(b, "machine.backend")) + " (" +
         text_of(field(b, "machine.git_commit")) + ")";
}

Comparison compare_sweeps(const nlohmann::json& a, const nlohmann::json& b, double min_change) {
  check_sweep_schema(a, "A");
  check_sweep_schema(b, "B");
  Comparison out;
  out.a_label = label_of(a);
  out.b_label = label_of(b);
  for (const char* key : {"implementation", "op", "machine.device", "machine.backend", "machine.git_commit",
                          "machine.kokkos_configuration", "machine.host", "impl", "config_override"}) {
    const auto& x = field(a["scanlab"], key);
    const auto& y = field(b["scanlab"], key);
    if (x != y) out.context_differences.push_back(std::string(key) + ": " + x.dump() + " -> " + y.dump());
  }
  std::map<std::string, const nlohmann::json*> in_b;
  for (const auto& c : b["cases"]) in_b[c["key"].get<std::string>()] = &c;
  std::set<std::string> matched;
  for (const auto& c : a["cases"]) {
    const std::string key = c["key"].get<std::string>();
    auto it = in_b.find(key);
    if (it == in_b.end()) {
      out.only_in_a.push_back(key);
      continue;
    }
    matched.insert(key);
    CaseComparison cc;
    cc.key = key;
    cc.a = spread_from_json(c["time_s"]);
    cc.b = spread_from_json((*it->second)["time_s"]);
    cc.ratio = cc.b.median / cc.a.median;
    cc.speedup = cc.a.median / cc.b.median;
    cc.verdict = compare_times(cc.a, cc.b, min_change);
    out.cases.push_back(cc);
  }
  for (const auto& c : b["cases"])
    if (!matched.count(c["key"].get<std::string>())) out.only_in_b.push_back(c["key"].get<std::string>());
  return out;
}

static std::string ms(const Spread& s) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.4g ms [%.4g, %.4g]", s.median * 1e3, s.q1 * 1e3, s.q3 * 1e3);
  return text;
}

std::string format_comparison(const Comparison& c) {
  std::string text = "A: " + c.a_label + "\nB: " + c.b_label + "\n";
  if (c.context_differences.empty()) text += "contexts: identical (a run-to-run comparison)\n";
  for (const auto& d : c.context_differences) text += "differs: " + d + "\n";
  text += "\ntime: median [q1, q3]; ratio = B/A; speedup = A/B\n";
  std::size_t width = 4;
  for (const auto& cc : c.cases) width = std::max(width, cc.key.size());
  char line[1024];
  std::snprintf(line, sizeof(line), "%-*s  %-32s  %-32s  %7s  %7s  %s\n", int(width), "case", "A", "B", "ratio",
                "speedup", "verdict");
  text += line;
  int faster = 0, slower = 0, same = 0;
  for (const auto& cc : c.cases) {
    std::snprintf(line, sizeof(line), "%-*s  %-32s  %-32s  %7.3f  %7.3f  %s\n", int(width), cc.key.c_str(),
                  ms(cc.a).c_str(), ms(cc.b).c_str(), cc.ratio, cc.speedup, to_string(cc.verdict).c_str());
    text += line;
    (cc.verdict == Verdict::faster ? faster : cc.verdict == Verdict::slower ? slower : same)++;
  }
  text += "\nB is faster in " + std::to_string(faster) + ", slower in " + std::to_string(slower) +
          ", the same within noise in " + std::to_string(same) + " of " + std::to_string(c.cases.size()) +
          " matched cases\n";
  if (!c.cases.empty()) {
    double log_sum = 0;
    for (const auto& cc : c.cases) log_sum += std::log(cc.speedup);
    std::snprintf(line, sizeof(line), "geometric mean speedup of B over A: %.3f\n",
                  std::exp(log_sum / double(c.cases.size())));
    text += line;
  }
  for (const auto& k : c.only_in_a) text += "only in A: " + k + "\n";
  for (const auto& k : c.only_in_b) text += "only in B: " + k + "\n";
  return text;
}

nlohmann::json to_json(const Comparison& c) {
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& cc : c.cases)
    cases.push_back({{"key", cc.key},
                     {"a_time_s", to_json(cc.a)},
                     {"b_time_s", to_json(cc.b)},
                     {"ratio", cc.ratio},
                     {"speedup", cc.speedup},
                     {"verdict", to_string(cc.verdict)}});
  return {{"a", c.a_label},
          {"b", c.b_label},
          {"context_differences", c.context_differences},
          {"cases", cases},
          {"only_in_a", c.only_in_a},
          {"only_in_b", c.only_in_b}};
}

}  // namespace scanlab::bench
