// Host tensors as they cross scanlab's boundaries: case directories, the float64 oracle, the
// error bounds and the CLI. Storage is float64 in C order whatever the file held, so the oracle
// and the comparisons never see a narrower type than they asked for. Kernels take Kokkos Views;
// kernels/host_bridge.hpp copies between the two.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace scanlab {

using Shape = std::vector<std::int64_t>;

std::string shape_string(const Shape& shape);   // "(2, 3, 4)"
std::int64_t shape_numel(const Shape& shape);   // throws on negative extents or int64 overflow

struct Tensor {
  Shape shape;
  std::vector<double> values;

  Tensor() = default;
  explicit Tensor(Shape s) : shape(std::move(s)), values(static_cast<std::size_t>(shape_numel(shape)), 0.0) {}
  Tensor(Shape s, std::vector<double> v);   // checks that v has numel(s) elements

  std::int64_t numel() const { return static_cast<std::int64_t>(values.size()); }
  std::int64_t rank() const { return static_cast<std::int64_t>(shape.size()); }
  double& operator[](std::int64_t i) { return values[static_cast<std::size_t>(i)]; }
  double operator[](std::int64_t i) const { return values[static_cast<std::size_t>(i)]; }
  // C-order flat offset of a multi-index; the index list must have one entry per axis.
  std::int64_t offset(std::initializer_list<std::int64_t> index) const;
  double& at(std::initializer_list<std::int64_t> index) { return (*this)[offset(index)]; }
  double at(std::initializer_list<std::int64_t> index) const { return (*this)[offset(index)]; }
};

// Tensors by the names the op's semantics give them (u, delta, A, ..., out, du, ...).
using TensorMap = std::map<std::string, Tensor>;

// Returns the tensor or throws std::invalid_argument naming what is missing.
const Tensor& require(const TensorMap& tensors, const std::string& name);
const Tensor* find(const TensorMap& tensors, const std::string& name);

}  // namespace scanlab
