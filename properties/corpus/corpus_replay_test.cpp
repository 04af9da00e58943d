// Every case kept in properties/corpus/ (hand-picked edges and fixed failures) replays on the
// reference backend and on every compiled Kokkos backend within the oracle's error bound. A case's
// config.json is used where it can run on the backend, the heuristic config elsewhere.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "cli/case_runner.hpp"

namespace scanlab {
namespace {

namespace fs = std::filesystem;

// The corpus of this checkout: $SCANLAB_SOURCE_DIR, the working directory (the GPU machine runs
// the binary from the repository root), then the source tree the binary was built from.
fs::path corpus_dir() {
  std::vector<fs::path> roots;
  if (const char* env = std::getenv("SCANLAB_SOURCE_DIR")) roots.emplace_back(env);
  roots.push_back(fs::current_path());
#ifdef SCANLAB_SOURCE_DIR
  roots.emplace_back(SCANLAB_SOURCE_DIR);
#endif
  for (const auto& root : roots)
    if (fs::is_directory(root / "properties" / "corpus")) return root / "properties" / "corpus";
  return {};
}

std::vector<fs::path> corpus_cases() {
  std::vector<fs::path> cases;
  const fs::path dir = corpus_dir();
  if (dir.empty()) return cases;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_directory() && fs::exists(entry.path() / "case.json")) cases.push_back(entry.path());
  std::sort(cases.begin(), cases.end());
  return cases;
}

TEST(Corpus, EveryCaseReplaysOnEveryBackend) {
  const auto cases = corpus_cases();
  ASSERT_FALSE(cases.empty()) << "no corpus found (set SCANLAB_SOURCE_DIR to the checkout, or run from its root)";
  std::set<std::string> ops;
  std::vector<Backend> backends{parse_backend("reference")};
  for (auto kind : compiled_kokkos_backends()) backends.push_back(parse_backend(to_string(kind)));
  for (const auto& dir : cases) {
    const io::Case c = io::read_case(dir.string());
    ops.insert(c.op);
    const auto config = cli::read_config_json(dir.string());
    for (const auto& backend : backends) {
      SCOPED_TRACE(dir.filename().string() + " on " + backend.name());
      cli::ImplRequest request;
      if (config && backend.is_kokkos()) {
        const bool runs = cli::visit_op(c.op, [&](auto op) {
          using T = decltype(op);
          const auto p = T::Problem::from_case(c.tensors, c.options);
          return T::invalid_reason(cli::config_from_json<T>(*config), p, backend.kind).empty();
        });
        if (runs) request.config = *config;
      }
      cli::RunResult result;
      ASSERT_NO_THROW(result = cli::run_case(c, backend, request));
      const auto check = cli::check_against_oracle(c, result.outputs);
      EXPECT_FALSE(check.comparisons.empty());
      EXPECT_TRUE(check.pass()) << reference::describe(check.comparisons);
    }
  }
  for (const auto& op : cli::op_names()) EXPECT_TRUE(ops.count(op)) << "the corpus holds no " << op << " case";
}

}  // namespace
}  // namespace scanlab
