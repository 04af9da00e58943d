// The case-directory protocol is scanlab's interface to NumPy, PyTorch and JAX users: files that
// np.save writes must load, and anything malformed must be refused with the file's name.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "cli/io/case_dir.hpp"
#include "kernels/problem/selective_scan.hpp"

namespace fs = std::filesystem;
using scanlab::Tensor;
using scanlab::io::DType;

namespace {

fs::path scratch_dir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("scanlab-io-test-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

Tensor random_tensor(scanlab::Shape shape, unsigned seed) {
  Tensor t(std::move(shape));
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  for (auto& v : t.values) v = normal(rng);
  return t;
}

// Writes a .npy the way NumPy 1.x does for a C-order array, independently of write_npy.
void write_numpy_style(const fs::path& path, const std::string& descr, const std::string& shape,
                       const std::string& payload, bool fortran = false) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                       ", 'shape': " + shape + ", }";
  header.append(63 - (10 + header.size()) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const char len[2] = {char(header.size() & 0xff), char(header.size() >> 8)};
  out.write(len, 2);
  out << header << payload;
}

std::string float_payload(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

}  // namespace

TEST(Npy, Float64RoundTripIsExact) {
  auto dir = scratch_dir("f64");
  Tensor t = random_tensor({2, 3, 5}, 1);
  scanlab::io::write_npy((dir / "x.npy").string(), t, DType::float64);
  Tensor back = scanlab::io::read_npy((dir / "x.npy").string());
  EXPECT_EQ(back.shape, t.shape);
  EXPECT_EQ(back.values, t.values);
}

TEST(Npy, Float32RoundTripRoundsToFloat) {
  auto dir = scratch_dir("f32");
  Tensor t = random_tensor({7}, 2);
  scanlab::io::write_npy((dir / "x.npy").string(), t, DType::float32);
  Tensor back = scanlab::io::read_npy((dir / "x.npy").string());
  ASSERT_EQ(back.shape, t.shape);
  for (std::int64_t i = 0; i < t.numel(); ++i) EXPECT_EQ(back[i], double(float(t[i])));
}

TEST(Npy, ReadsNumpyWrittenScalarAndVectorShapes) {
  auto dir = scratch_dir("shapes");
  write_numpy_style(dir / "v.npy", "<f4", "(3,)", float_payload({1.5f, -2.0f, 3.25f}));
  Tensor v = scanlab::io::read_npy((dir / "v.npy").string());
  EXPECT_EQ(v.shape, (scanlab::Shape{3}));
  EXPECT_EQ(v.values, (std::vector<double>{1.5, -2.0, 3.25}));
  write_numpy_style(dir / "m.npy", "<f4", "(2, 1)", float_payload({4.0f, 5.0f}));
  EXPECT_EQ(scanlab::io::read_npy((dir / "m.npy").string()).shape, (scanlab::Shape{2, 1}));
}

TEST(Npy, RefusesWrongDtypeNamingTheFile) {
  auto dir = scratch_dir("dtype");
  write_numpy_style(dir / "bad.npy", "<i8", "(1,)", std::string(8, '\0'));
  try {
    scanlab::io::read_npy((dir / "bad.npy").string());
    FAIL() << "int64 accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.npy"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("<i8"), std::string::npos) << e.what();
  }
  write_numpy_style(dir / "big.npy", ">f4", "(1,)", std::string(4, '\0'));
  EXPECT_THROW(scanlab::io::read_npy((dir / "big.npy").string()), std::runtime_error);
}

TEST(Npy, RefusesTruncatedAndOverlongFiles) {
  auto dir = scratch_dir("trunc");
  write_numpy_style(dir / "short.npy", "<f4", "(4,)", float_payload({1, 2, 3}));
  try {
    scanlab::io::read_npy((dir / "short.npy").string());
    FAIL() << "truncated file accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("short.npy"), std::string::npos) << e.what();
  }
  write_numpy_style(dir / "long.npy", "<f4", "(2,)", float_payload({1, 2, 3}));
  EXPECT_THROW(scanlab::io::read_npy((dir / "long.npy").string()), std::runtime_error);
  std::ofstream(dir / "garbage.npy") << "not numpy";
  EXPECT_THROW(scanlab::io::read_npy((dir / "garbage.npy").string()), std::runtime_error);
  EXPECT_THROW(scanlab::io::read_npy((dir / "absent.npy").string()), std::runtime_error);
}

TEST(Npy, RefusesFortranOrder) {
  auto dir = scratch_dir("fortran");
  write_numpy_style(dir / "f.npy", "<f4", "(2, 2)", float_payload({1, 2, 3, 4}), true);
  EXPECT_THROW(scanlab::io::read_npy((dir / "f.npy").string()), std::runtime_error);
}

TEST(CaseDir, RoundTripKeepsOptionsAndTensors) {
  auto dir = scratch_dir("case");
  scanlab::io::Case c;
  c.op = "selective_scan";
  c.options = {{"delta_softplus", true}, {"seed", 7}};
  c.tensors["u"] = random_tensor({1, 2, 3}, 3);
  c.tensors["A"] = random_tensor({2, 4}, 4);
  scanlab::io::write_case(dir.string(), c);
  auto back = scanlab::io::read_case(dir.string());
  EXPECT_EQ(back.op, "selective_scan");
  EXPECT_EQ(back.options.at("delta_softplus"), true);
  EXPECT_EQ(back.options.at("seed"), 7);
  ASSERT_EQ(back.tensors.size(), 2u);
  EXPECT_EQ(back.tensors.at("u").values, c.tensors.at("u").values);
}

TEST(CaseDir, MissingOrBrokenCaseJsonIsNamed) {
  auto dir = scratch_dir("nojson");
  EXPECT_THROW(scanlab::io::read_case(dir.string()), std::runtime_error);
  std::ofstream(dir / "case.json") << "{\"op\": ";
  try {
    scanlab::io::read_case(dir.string());
    FAIL() << "broken JSON accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("case.json"), std::string::npos) << e.what();
  }
  std::ofstream(dir / "case.json") << "{\"delta_softplus\": true}";
  EXPECT_THROW(scanlab::io::read_case(dir.string()), std::runtime_error);  // no "op"
}

TEST(CaseDir, ShapeDisagreementIsCaughtByTheDescriptor) {
  scanlab::TensorMap t;
  t["u"] = random_tensor({2, 3, 5}, 5);
  t["delta"] = random_tensor({2, 3, 4}, 6);  // wrong seqlen
  t["A"] = random_tensor({3, 4}, 7);
  t["B"] = random_tensor({2, 4, 5}, 8);
  t["C"] = random_tensor({2, 4, 5}, 9);
  try {
    scanlab::SelectiveScanProblem::from_case(t, {{"op", "selective_scan"}});
    FAIL() << "mismatched delta accepted";
  } catch (const scanlab::ProblemError& e) {
    EXPECT_NE(std::string(e.what()).find("'delta' has shape (2, 3, 4), expected (2, 3, 5)"), std::string::npos)
        << e.what();
  }
}
