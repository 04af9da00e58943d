#include "verbs.hpp"

#include "scanlab_git_commit.hpp"

#include <cstdlib>
#include <string>

#include "tune.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>

namespace scanlab::cli {

static std::map<std::string, Verb>& registry() {
  static std::map<std::string, Verb> verbs;
  return verbs;
}

bool register_verb(Verb verb) {
  registry()[verb.name] = std::move(verb);
  return true;
}

static void print_help() {
  std::printf(
      "scanlab %s (%s): a research harness for selective state-space scans\n\n"
      "usage: scanlab VERB [options]      (scanlab VERB --help for a verb's options)\n\nverbs:\n",
      SCANLAB_VERSION, SCANLAB_GIT_COMMIT);
  for (const auto& [name, verb] : registry()) std::printf("  %-12s %s\n", name.c_str(), verb.summary.c_str());
  std::printf(
      "\nops: selective_scan, state_space_v1, s7_scan, s7_inner\n"
      "Kokkos flags (--kokkos-threads=N on Kokkos 3, --kokkos-num-threads=N on Kokkos 4, --kokkos-device-id=N) may be\n"
      "given to any verb. Under mpirun or srun each rank binds itself to a GPU or to its share of the cores.\n");
}

int dispatch(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    print_help();
    return argc < 2 ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::printf("scanlab %s (%s)\n", SCANLAB_VERSION, SCANLAB_GIT_COMMIT);
    return 0;
  }
  auto it = registry().find(argv[1]);
  if (it == registry().end()) {
    std::fprintf(stderr, "scanlab: unknown verb '%s' (see scanlab --help)\n", argv[1]);
    return 2;
  }
  // `--impl auto` consults the tuning cache (cli/tune.hpp); SCANLAB_TUNE_CACHE=off disables it.
  const char* cache_env = std::getenv("SCANLAB_TUNE_CACHE");
  if (!(cache_env && std::string(cache_env) == "off")) install_tuning_cache(default_tune_cache_path());
  // The verb sees "scanlab VERB" as its program name.
  std::string program = std::string("scanlab ") + argv[1];
  std::vector<char*> args{program.data()};
  for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
  const int count = static_cast<int>(args.size());
  // argv[argc] is a null pointer, as main's own: gtest's flag parsing moves it down with the
  // flags it takes out (`scanlab test --gtest_filter=X` read one past the array: ASan, session 41)
  args.push_back(nullptr);
  return it->second.run(count, args.data());
}

}  // namespace scanlab::cli
