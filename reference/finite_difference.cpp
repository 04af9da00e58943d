#include "finite_difference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <stdexcept>

namespace scanlab::reference {

static double loss(const TensorMap& outputs, const std::map<std::string, Tensor>& cotangents) {
  double total = 0;
  for (const auto& [name, cot] : cotangents) {
    const Tensor& out = require(outputs, name);
    if (out.shape != cot.shape)
      throw std::invalid_argument("cotangent of '" + name + "' has shape " + shape_string(cot.shape) +
                                  ", output has " + shape_string(out.shape));
    for (std::int64_t i = 0; i < out.numel(); ++i) total += out[i] * cot[i];
  }
  return total;
}

std::vector<GradientCheck> check_gradients(const ForwardFn& forward, const TensorMap& inputs,
                                           const std::map<std::string, Tensor>& cotangents,
                                           const TensorMap& analytic,
                                           const std::vector<std::string>& inputs_to_check,
                                           const FiniteDifferenceOptions& options) {
  std::mt19937_64 rng(options.seed);
  std::vector<GradientCheck> checks;
  for (const auto& name : inputs_to_check) {
    const Tensor& x = require(inputs, name);
    const Tensor& g = require(analytic, "d" + name);
    if (g.shape != x.shape)
      throw std::invalid_argument("gradient d" + name + " has shape " + shape_string(g.shape) + ", input has " +
                                  shape_string(x.shape));
    std::vector<std::int64_t> elements(static_cast<std::size_t>(x.numel()));
    std::iota(elements.begin(), elements.end(), 0);
    if (x.numel() > options.max_elements) {
      std::shuffle(elements.begin(), elements.end(), rng);
      elements.resize(static_cast<std::size_t>(options.max_elements));
    }
    GradientCheck c;
    c.input = name;
    c.probed = static_cast<std::int64_t>(elements.size());
    std::vector<double> fd(elements.size());
    TensorMap probe = inputs;
    Tensor& xp = probe.at(name);
    for (std::size_t k = 0; k < elements.size(); ++k) {
      const std::int64_t i = elements[k];
      const double x0 = x[i];
      const double h = options.relative_step * std::max(1.0, std::fabs(x0));
      xp[i] = x0 + h;
      const double up = loss(forward(probe), cotangents);
      xp[i] = x0 - h;
      const double down = loss(forward(probe), cotangents);
      xp[i] = x0;
      fd[k] = (up - down) / (2 * h);
    }
    double scale = 1e-300;
    for (std::size_t k = 0; k < elements.size(); ++k)
      scale = std::max({scale, std::fabs(g[elements[k]]), std::fabs(fd[k])});
    for (std::size_t k = 0; k < elements.size(); ++k) {
      const double err = std::fabs(fd[k] - g[elements[k]]) / scale;
      if (std::isnan(err) || err > c.max_error || c.worst_index < 0) {
        c.max_error = std::isnan(err) ? INFINITY : err;
        c.worst_index = elements[k];
        c.fd = fd[k];
        c.analytic = g[elements[k]];
      }
    }
    c.pass = c.max_error <= options.tolerance;
    checks.push_back(c);
  }
  return checks;
}

std::string describe(const std::vector<GradientCheck>& checks) {
  std::string text;
  char line[256];
  for (const auto& c : checks) {
    std::snprintf(line, sizeof line, "  d%-15s probed %4lld  max rel err %.3g at [%lld]: fd %.12g analytic %.12g%s\n",
                  c.input.c_str(), static_cast<long long>(c.probed), c.max_error,
                  static_cast<long long>(c.worst_index), c.fd, c.analytic, c.pass ? "" : "  FAIL");
    text += line;
  }
  return text;
}

}  // namespace scanlab::reference
