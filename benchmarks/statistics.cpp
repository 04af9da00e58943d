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

}  // namespace scanlab::bench
