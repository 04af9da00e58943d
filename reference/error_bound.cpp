#include "error_bound.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

namespace scanlab::reference {

std::vector<TensorComparison> compare_with_bounds(const TensorMap& got, const TensorMap& expected,
                                                  const TensorMap& bounds) {
  std::vector<TensorComparison> result;
  for (const auto& [name, bound] : bounds) {
    const Tensor* e = find(expected, name);
    if (!e) continue;
    TensorComparison c;
    c.name = name;
    c.elements = e->numel();
    const Tensor* g = find(got, name);
    if (!g) {
      c.problem = "missing from the result";
    } else if (g->shape != e->shape) {
      c.problem = "shape " + shape_string(g->shape) + ", expected " + shape_string(e->shape);
    } else if (bound.shape != e->shape) {
      c.problem = "bound has shape " + shape_string(bound.shape) + ", expected " + shape_string(e->shape);
    } else {
      for (std::int64_t i = 0; i < e->numel(); ++i) {
        const double diff = std::fabs((*g)[i] - (*e)[i]);
        double ratio;
        if (!std::isfinite((*g)[i]) || std::isnan(diff)) {
          ++c.non_finite;
          ratio = std::numeric_limits<double>::infinity();
        } else if (bound[i] > 0) {
          ratio = diff / bound[i];
        } else {
          ratio = diff == 0 ? 0 : std::numeric_limits<double>::infinity();
        }
        if (ratio > c.max_ratio || c.worst_index < 0) {
          c.max_ratio = ratio;
          c.worst_index = i;
          c.got = (*g)[i]; c.expected = (*e)[i]; c.bound = bound[i];
        }
      }
    }
    result.push_back(c);
  }
  return result;
}

bool all_pass(const std::vector<TensorComparison>& comparisons) {
  for (const auto& c : comparisons)
    if (!c.pass()) return false;
  return true;
}

std::string describe(const std::vector<TensorComparison>& comparisons) {
  std::string text;
  char line[512];
  std::snprintf(line, sizeof line, "  %-16s %10s %12s %10s  %s\n", "tensor", "elements", "max err/bound", "non-finite",
                "worst element (got / expected / bound)");
  text += line;
  for (const auto& c : comparisons) {
    if (!c.problem.empty()) {
      std::snprintf(line, sizeof line, "  %-16s %s\n", c.name.c_str(), c.problem.c_str());
    } else {
      std::snprintf(line, sizeof line, "  %-16s %10lld %12.3g %10lld  [%lld] %.9g / %.9g / %.3g%s\n", c.name.c_str(),
                    static_cast<long long>(c.elements), c.max_ratio, static_cast<long long>(c.non_finite),
                    static_cast<long long>(c.worst_index), c.got, c.expected, c.bound, c.pass() ? "" : "  FAIL");
    }
    text += line;
  }
  return text;
}

}  // namespace scanlab::reference
