// Summary statistics of repeated timings: medians and interquartile ranges, never means, so one
// slow repetition (a clock change, a page fault) does not move the number users publish.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace scanlab::bench {

struct Spread {
  double median = 0, q1 = 0, q3 = 0, min = 0, max = 0;
  int count = 0;
  double iqr() const { return q3 - q1; }
};

// Quartiles by linear interpolation between order statistics (NumPy's default method).
Spread spread_of(std::vector<double> samples);

// {"median", "q1", "q3", "iqr", "min", "max", "count"}; from_json reads the same object back
// (iqr is derived, so it is not read).
nlohmann::json to_json(const Spread& spread);
Spread spread_from_json(const nlohmann::json& object);

// The verdict on "B against A" for two timings. B is faster or slower only when the two
// interquartile ranges do not overlap AND the medians differ by at least min_change (relative):
// overlapping IQRs mean the difference is inside the run-to-run spread, and a tiny systematic
// shift (clock drift between runs) is not a change worth reporting either.
enum class Verdict { faster, slower, same_within_noise };
std::string to_string(Verdict verdict);
Verdict compare_times(const Spread& a, const Spread& b, double min_change);

}  // namespace scanlab::bench
