#include "case_dir.hpp"

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace scanlab::io {

TensorMap read_tensors(const std::string& dir) {
  if (!fs::is_directory(dir)) throw std::runtime_error(dir + ": not a directory");
  TensorMap tensors;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".npy") continue;
    tensors[entry.path().stem().string()] = read_npy(entry.path().string());
  }
  return tensors;
}

Case read_case(const std::string& dir) {
  const fs::path json_path = fs::path(dir) / "case.json";
  std::ifstream in(json_path);
  if (!in) throw std::runtime_error(json_path.string() + ": cannot open (is '" + dir + "' a case directory?)");
  Case c;
  try {
    c.options = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::runtime_error(json_path.string() + ": invalid JSON: " + e.what());
  }
  if (!c.options.is_object()) throw std::runtime_error(json_path.string() + ": must hold a JSON object");
  if (!c.options.contains("op") || !c.options["op"].is_string())
    throw std::runtime_error(json_path.string() + ": \"op\" (a string) is required");
  c.op = c.options["op"].get<std::string>();
  c.tensors = read_tensors(dir);
  return c;
}

void write_tensors(const std::string& dir, const TensorMap& tensors, DType dtype) {
  fs::create_directories(dir);
  for (const auto& [name, t] : tensors) write_npy((fs::path(dir) / (name + ".npy")).string(), t, dtype);
}

void write_case(const std::string& dir, const Case& c) {
  fs::create_directories(dir);
  nlohmann::json options = c.options;
  options["op"] = c.op;
  std::ofstream out(fs::path(dir) / "case.json");
  out << options.dump(2) << "\n";
  if (!out) throw std::runtime_error(dir + "/case.json: write failed");
  write_tensors(dir, c.tensors, DType::float64);
}

}  // namespace scanlab::io
