// `scanlab run OP --case DIR [--backend B] [--impl I] [--out DIR]`: one case directory through one
// backend, outputs written as NAME.npy (DESIGN.md's case directories).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "case_runner.hpp"
#include "verbs.hpp"

namespace scanlab::cli {
namespace {

int run_verb(int argc, char** argv) {
  CLI::App app{"Runs one case directory of OP on one backend and writes its outputs (and, when the case holds dout, "
               "its gradients d<input>) as NAME.npy: float64 from the reference backend and from exec (as the "
               "implementation wrote them, widened), float32 from the Kokkos backends.",
               "scanlab run"};
  std::string op, case_dir, backend_text = "auto", impl = "auto", out_dir;
  app.add_option("OP", op, "selective_scan, state_space_v1, s7_scan or s7_inner; must match case.json's \"op\"")->required();
  app.add_option("--case", case_dir, "the case directory: case.json plus one NAME.npy per input")->required();
  app.add_option("--backend", backend_text, backend_help())->capture_default_str();
  app.add_option("--impl", impl, impl_help())->capture_default_str();
  bool no_cache = false;
  app.add_flag("--no-cache", no_cache, "--impl auto ignores the tuning cache (the heuristic config)");
  app.add_option("--out", out_dir, "where the outputs go (default: CASE/out-BACKEND/, CASE/out-exec/ for exec)");
  if (int code = parse_command_line(app, argc, argv); code >= 0) return code;

  const Backend backend = parse_backend(backend_text);
  visit_op(op, [](auto) { return 0; });  // an unknown OP is a usage error before any file is read
  const io::Case c = io::read_case(case_dir);
  if (c.op != op)
    throw std::invalid_argument(case_dir + "/case.json holds op '" + c.op + "', not '" + op + "' (run it as scanlab run " +
                                c.op + " --case " + case_dir + ")");
  if (out_dir.empty()) out_dir = (std::filesystem::path(case_dir) / ("out-" + backend_dir_name(backend))).string();

  RunResult result;
  try {
    ImplRequest request;
    request.impl = impl;
    request.use_tuning_cache = !no_cache;
    result = run_case(c, backend, request);
  } catch (const std::runtime_error& e) {
    if (backend.kind != BackendKind::exec) throw;
    std::fprintf(stderr, "scanlab run: %s\n", e.what());
    return 1;  // the implementation failed, not the command line
  }
  const io::DType dtype = backend.is_kokkos() ? io::DType::float32 : io::DType::float64;
  io::write_tensors(out_dir, result.outputs, dtype);

  std::printf("%s on %s", op.c_str(), backend.name().c_str());
  if (!result.config.is_null()) std::printf(" with config %s", result.config.dump().c_str());
  std::printf(": %.6f s", result.wall_seconds);
  if (result.reported_seconds) std::printf(" (the implementation reports %.6f s in timing.json)", *result.reported_seconds);
  std::printf("\nwrote %zu tensors (%s) to %s:\n", result.outputs.size(),
              dtype == io::DType::float32 ? "float32" : "float64", out_dir.c_str());
  for (const auto& [name, t] : result.outputs) std::printf("  %-18s %s\n", (name + ".npy").c_str(), shape_string(t.shape).c_str());
  return 0;
}

const bool registered = register_verb({"run", "run one case directory on one backend, outputs to --out", run_verb});

}  // namespace
}  // namespace scanlab::cli
