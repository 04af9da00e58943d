// `scanlab replay DIR [--backend B] [--impl I]`: re-runs a saved case directory (a shrunk failure, a
// corpus case, any case) and compares it with the float64 oracle within the error bound.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "case_runner.hpp"
#include "verbs.hpp"

namespace scanlab::cli {
namespace {

int replay_verb(int argc, char** argv) {
  CLI::App app{"Re-runs a saved case directory on a backend and compares every output and gradient with the float64 "
               "oracle within its error bound, one row per tensor. A failing case saved by `scanlab check` or a "
               "property holds config.json, the kernel config it failed with: the Kokkos backends use it unless "
               "--impl is given (or it cannot run on that backend, which is said). Exit status: 0 pass, 1 fail "
               "(or the implementation failed), 2 a usage error or an unreadable case.",
               "scanlab replay"};
  std::string dir, backend_text = "auto", impl = "auto";
  app.add_option("DIR", dir, "the case directory (case.json, NAME.npy; config.json optional)")->required();
  app.add_option("--backend", backend_text, backend_help())->capture_default_str();
  app.add_option("--impl", impl, impl_help() + "; when not given, DIR/config.json is used if present")
      ->capture_default_str();
  if (int code = parse_command_line(app, argc, argv); code >= 0) return code;

  const Backend backend = parse_backend(backend_text);
  const io::Case c = io::read_case(dir);
  ImplRequest request{impl};
  std::string config_note;
  if (backend.is_kokkos() && app.count("--impl") == 0) {
    if (auto config = read_config_json(dir)) {
      const std::string reason = visit_op(c.op, [&](auto op) {
        using T = decltype(op);
        const auto p = T::Problem::from_case(c.tensors, c.options);
        return T::invalid_reason(config_from_json<T>(*config), p, backend.kind);
      });
      if (reason.empty()) {
        request.config = *config;
        config_note = " (config.json)";
      } else {
        config_note = " (config.json cannot run on " + backend.name() + ": " + reason + "; using --impl auto)";
      }
    }
  }

  std::printf("replay %s: %s on %s", dir.c_str(), c.op.c_str(), backend.name().c_str());
  RunResult result;
  try {
    result = run_case(c, backend, request);
  } catch (const std::invalid_argument&) {
    throw;  // the case or the request is wrong: a usage error
  } catch (const std::exception& e) {
    std::printf("\nFAIL: %s\n", e.what());
    return 1;
  }
  if (!result.config.is_null()) std::printf(" with config %s%s", result.config.dump().c_str(), config_note.c_str());
  std::printf("\n");
  const OracleCheck check = check_against_oracle(c, result.outputs);
  std::printf("%s", reference::describe(check.comparisons).c_str());
  const bool pass = check.pass() && !check.comparisons.empty();
  std::printf("%s: %zu tensors compared with the oracle\n", pass ? "PASS" : "FAIL", check.comparisons.size());
  return pass ? 0 : 1;
}

const bool registered =
    register_verb({"replay", "re-run a saved case directory against the oracle; pass or fail", replay_verb});

}  // namespace
}  // namespace scanlab::cli
