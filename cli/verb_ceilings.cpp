// `scanlab ceilings [--backend B] [--quick] --out FILE`: the machine's measured ceilings as JSON.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>

#include "benchmarks/ceilings.hpp"
#include "verbs.hpp"

namespace {

int run_ceilings(int argc, char** argv) {
  CLI::App app{"Measures the machine's ceilings (copy bandwidth native and in Kokkos, memory and L2 read, FP32 FMA,\n"
               "SFU exp2/log2/rcp) on one backend and writes them as JSON (reports/README.md: the schema).",
               "scanlab ceilings"};
  std::string backend_text = "auto", out;
  scanlab::bench::CeilingOptions options;
  app.add_option("--backend", backend_text, "serial, openmp, cuda or auto (the fastest compiled in)")->capture_default_str();
  app.add_option("--out", out, "JSON file to write")->required();
  app.add_option("--copy-bytes", options.copy_bytes,
                 "bytes per copy buffer (default: 1 GiB on CUDA, max(4 x last-level cache, 64 MiB) on a host)");
  app.add_option("--repetitions", options.repetitions, "timed repetitions per measurement (default 20 on CUDA, 10 on a host)");
  app.add_flag("--quick", options.quick, "small buffers and 3 repetitions: for tests and CI, not for publishing");
  CLI11_PARSE(app, argc, argv);

  const auto backend = scanlab::parse_backend(backend_text);
  std::ofstream file(out);  // opened first, so a bad path fails before minutes of measuring
  if (!file) throw std::runtime_error("cannot write " + out);
  const auto ceilings = scanlab::bench::measure_ceilings(backend, options);
  file << ceilings.dump(2) << "\n";
  const auto r = scanlab::bench::roofline_of(ceilings);
  std::fprintf(stderr,
               "%s on %s:\n  %s copy %.1f GB/s (%s); the Kokkos streaming pattern reaches %.0f%% of the native copy\n"
               "  L2 read %.1f GB/s; FP32 %.1f GFLOP/s; SFU exp2 %.2f G/s\nwrote %s\n",
               backend.name().c_str(), ceilings["machine"]["device"].get<std::string>().c_str(), r.memory_label.c_str(),
               r.memory_bytes_per_s * 1e-9, ceilings["roofline"]["memory_source"].get<std::string>().c_str(),
               100 * ceilings["streaming_pattern"]["fraction_of_native"].get<double>(),
               r.l2_bytes_per_s * 1e-9, r.fp32_flops_per_s * 1e-9, r.sfu_ops_per_s * 1e-9, out.c_str());
  return 0;
}

const bool registered = scanlab::cli::register_verb(
    {"ceilings", "measure the machine's ceilings (copy, memory/L2 read, FP32 FMA, SFU) to JSON", run_ceilings});

}  // namespace
