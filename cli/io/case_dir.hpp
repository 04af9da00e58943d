// Case directories, the unit of interchange (DESIGN.md): case.json with "op" and the op's
// scalar options, and one NAME.npy per tensor. Outputs go to a separate directory.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "../../kernels/tensor.hpp"
#include "npy.hpp"

namespace scanlab::io {

struct Case {
  std::string op;
  nlohmann::json options;  // case.json's whole object, "op" included
  TensorMap tensors;       // every NAME.npy in the directory
};

// Reads case.json and every *.npy beside it (not in subdirectories). Errors name the file.
Case read_case(const std::string& dir);
// Writes case.json and the tensors (float64, so a saved failing case replays bit for bit).
void write_case(const std::string& dir, const Case& c);
// Reads every *.npy of a directory (an output directory, or expected/ of a golden).
TensorMap read_tensors(const std::string& dir);
// Writes each tensor as NAME.npy in dir, creating it.
void write_tensors(const std::string& dir, const TensorMap& tensors, DType dtype);

}  // namespace scanlab::io
