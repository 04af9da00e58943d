#include "tensor.hpp"

#include <limits>
#include <sstream>

namespace scanlab {

std::string shape_string(const Shape& shape) {
  std::ostringstream s;
  s << '(';
  for (std::size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
  if (shape.size() == 1) s << ',';
  s << ')';
  return s.str();
}

std::int64_t shape_numel(const Shape& shape) {
  std::int64_t n = 1;
  for (auto extent : shape) {
    if (extent < 0) throw std::invalid_argument("negative extent in shape " + shape_string(shape));
    if (extent != 0 && n > std::numeric_limits<std::int64_t>::max() / extent)
      throw std::overflow_error("element count of shape " + shape_string(shape) + " overflows int64");
    n *= extent;
  }
  return n;
}

Tensor::Tensor(Shape s, std::vector<double> v) : shape(std::move(s)), values(std::move(v)) {
  if (static_cast<std::int64_t>(values.size()) != shape_numel(shape))
    throw std::invalid_argument("tensor of shape " + shape_string(shape) + " given " +
                                std::to_string(values.size()) + " values");
}

std::int64_t Tensor::offset(std::initializer_list<std::int64_t> index) const {
  if (index.size() != shape.size())
    throw std::out_of_range("index of rank " + std::to_string(index.size()) + " into tensor of shape " +
                            shape_string(shape));
  std::int64_t flat = 0;
  std::size_t axis = 0;
  for (auto i : index) {
    if (i < 0 || i >= shape[axis])
      throw std::out_of_range("index " + std::to_string(i) + " out of range on axis " + std::to_string(axis) +
                              " of shape " + shape_string(shape));
    flat = flat * shape[axis] + i;
    ++axis;
  }
  return flat;
}

const Tensor* find(const TensorMap& tensors, const std::string& name) {
  auto it = tensors.find(name);
  return it == tensors.end() ? nullptr : &it->second;
}

const Tensor& require(const TensorMap& tensors, const std::string& name) {
  if (auto* t = find(tensors, name)) return *t;
  throw std::invalid_argument("missing tensor '" + name + "'");
}

}  // namespace scanlab
