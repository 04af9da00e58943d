#include "npy.hpp"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <regex>
#include <stdexcept>
#include <vector>

namespace scanlab::io {

static std::runtime_error npy_error(const std::string& path, const std::string& what) {
  return std::runtime_error(path + ": " + what);
}

Tensor read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw npy_error(path, "cannot open for reading");
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    throw npy_error(path, "not a .npy file (bad magic string)");
  const int major = static_cast<unsigned char>(magic[6]);
  std::uint32_t header_len = 0;
  if (major == 1) {
    unsigned char b[2];
    if (!in.read(reinterpret_cast<char*>(b), 2)) throw npy_error(path, "truncated header");
    header_len = b[0] | (b[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    if (!in.read(reinterpret_cast<char*>(b), 4)) throw npy_error(path, "truncated header");
    header_len = b[0] | (b[1] << 8) | (b[2] << 16) | (std::uint32_t(b[3]) << 24);
  } else {
    throw npy_error(path, "unsupported .npy format version " + std::to_string(major));
  }
  if (header_len > (1u << 20)) throw npy_error(path, "implausible header length");
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len)) throw npy_error(path, "truncated header");

  std::smatch m;
  if (!std::regex_search(header, m, std::regex(R"('descr'\s*:\s*'([^']*)')")))
    throw npy_error(path, "header has no 'descr'");
  const std::string descr = m[1];
  std::size_t item = 0;
  if (descr == "<f4") item = 4;
  else if (descr == "<f8") item = 8;
  else
    throw npy_error(path, "dtype '" + descr + "' is not supported; save little-endian float32 or float64 (<f4, <f8)");
  if (!std::regex_search(header, m, std::regex(R"('fortran_order'\s*:\s*(True|False))")))
    throw npy_error(path, "header has no 'fortran_order'");
  if (m[1] == "True") throw npy_error(path, "Fortran order is not supported; save a C-contiguous array");
  if (!std::regex_search(header, m, std::regex(R"('shape'\s*:\s*\(([^)]*)\))")))
    throw npy_error(path, "header has no 'shape'");
  Shape shape;
  const std::string dims = m[1];
  std::regex int_re(R"(\d+)");
  for (auto it = std::sregex_iterator(dims.begin(), dims.end(), int_re); it != std::sregex_iterator(); ++it)
    shape.push_back(std::stoll(it->str()));

  const std::int64_t n = shape_numel(shape);
  const auto data_start = in.tellg();
  in.seekg(0, std::ios::end);
  const auto file_end = in.tellg();
  const std::int64_t available = static_cast<std::int64_t>(file_end - data_start);
  const std::int64_t needed = n * static_cast<std::int64_t>(item);
  if (available < needed)
    throw npy_error(path, "truncated: shape " + shape_string(shape) + " needs " + std::to_string(needed) +
                              " data bytes, the file has " + std::to_string(available));
  if (available > needed)
    throw npy_error(path, "has " + std::to_string(available - needed) + " bytes past the data of shape " +
                              shape_string(shape));
  in.seekg(data_start);
  Tensor t(shape);
  if (item == 8) {
    in.read(reinterpret_cast<char*>(t.values.data()), needed);
  } else {
    std::vector<float> buf(static_cast<std::size_t>(n));
    in.read(reinterpret_cast<char*>(buf.data()), needed);
    for (std::int64_t i = 0; i < n; ++i) t[i] = buf[static_cast<std::size_t>(i)];
  }
  if (!in) throw npy_error(path, "read failed");
  return t;
}

void write_npy(const std::string& path, const Tensor& tensor, DType dtype) {
  std::string shape = "(";
  for (std::size_t i = 0; i < tensor.shape.size(); ++i) shape += std::to_string(tensor.shape[i]) + ", ";
  if (tensor.shape.size() > 1) shape.resize(shape.size() - 2);
  else if (tensor.shape.size() == 1) shape.resize(shape.size() - 1);
  shape += ")";
  std::string header = std::string("{'descr': '") + (dtype == DType::float32 ? "<f4" : "<f8") +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so that the data starts on a 64-byte boundary, as NumPy does.
  const std::size_t preamble = 10;
  std::size_t total = preamble + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  if (header.size() > 65535) throw npy_error(path, "header too long for format 1.0");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw npy_error(path, "cannot open for writing");
  out.write("\x93NUMPY\x01\x00", 8);
  const unsigned char len[2] = {static_cast<unsigned char>(header.size() & 0xff),
                                static_cast<unsigned char>(header.size() >> 8)};
  out.write(reinterpret_cast<const char*>(len), 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  if (dtype == DType::float64) {
    out.write(reinterpret_cast<const char*>(tensor.values.data()),
              static_cast<std::streamsize>(tensor.values.size() * sizeof(double)));
  } else {
    std::vector<float> buf(tensor.values.begin(), tensor.values.end());
    out.write(reinterpret_cast<const char*>(buf.data()), static_cast<std::streamsize>(buf.size() * sizeof(float)));
  }
  if (!out) throw npy_error(path, "write failed (disk full?)");
}

}  // namespace scanlab::io
