#include "statistics.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace scanlab::bench {

static double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * double(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - double(lo)) * (sorted[hi] - sorted[lo]);
}

Spread spread_of(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("spread_of: no samples");
  std::sort(samples.begin(), samples.end());
  Spread s;
  s.count = static_cast<int>(samples.size());
  s.min = samples.front();
  s.max = samples.back();
  s.median = quantile(samples, 0.5);
  s.q1 = quantile(samples, 0.25);
  s.q3 = quantile(samples, 0.75);
  return s;
}

nlohmann::json to_json(const Spread& s) {
  return {{"median", s.median}, {"q1", s.q1}, {"q3", s.q3}, {"iqr", s.iqr()},
          {"min", s.min},       {"max", s.max}, {"count", s.count}};
}

Spread spread_from_json(const nlohmann::json& object) {
  Spread s;
  for (const char* key : {"median", "q1", "q3", "min", "max", "count"})
    if (!object.contains(key) || !object.at(key).is_number())
      throw std::invalid_argument(std::string("timing object lacks a numeric '") + key + "': " + object.dump());
  s.median = object.at("median").get<double>();
  s.q1 = object.at("q1").get<double>();
  s.q3 = object.at("q3").get<double>();
  s.min = object.at("min").get<double>();
  s.max = object.at("max").get<double>();
  s.count = object.at("count").get<int>();
  if (!(s.min <= s.q1 && s.q1 <= s.median && s.median <= s.q3 && s.q3 <= s.max))
    throw std::invalid_argument("timing object is not ordered min <= q1 <= median <= q3 <= max: " + object.dump());
  return s;
}

std::string to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::faster: return "faster";
    case Verdict::slower: return "slower";
    case Verdict::same_within_noise: return "same within noise";
  }
  return "?";
}

Verdict compare_times(const Spread& a, const Spread& b, double min_change) {
  if (!(a.median > 0) || !(b.median > 0)) throw std::invalid_argument("compare_times: medians must be positive");
  const bool overlap = b.q1 <= a.q3 && a.q1 <= b.q3;
  const double change = std::fabs(b.median / a.median - 1.0);
  if (overlap || change < min_change) return Verdict::same_within_noise;
  return b.median < a.median ? Verdict::faster : Verdict::slower;
}

}  // namespace scanlab::bench
