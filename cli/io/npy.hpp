// NumPy .npy files (format 1.0-3.0), little-endian float32 or float64, C order: what np.save
// writes for the arrays scanlab exchanges. Anything else is refused with a message naming the file.
#pragma once

#include <string>

#include "../../kernels/tensor.hpp"

namespace scanlab::io {

enum class DType { float32, float64 };

Tensor read_npy(const std::string& path);  // throws std::runtime_error naming the file
void write_npy(const std::string& path, const Tensor& tensor, DType dtype);

}  // namespace scanlab::io
