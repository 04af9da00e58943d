// Summary statistics of repeated timings: medians and interquartile ranges, never means, so one
// slow repetition (a clock change, a page fault) does not move the number users publish.
#pragma once

#include <vector>

namespace scanlab::bench {

struct Spread {
  double median = 0, q1 = 0, q3 = 0, min = 0, max = 0;
  int count = 0;
  double iqr() const { return q3 - q1; }
};

// Quartiles by linear interpolation between order statistics (NumPy's default method).
Spread spread_of(std::vector<double> samples);

}  // namespace scanlab::bench
