#include "context.hpp"

#include "scanlab_git_commit.hpp"

#include <Kokkos_Core.hpp>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <string>

namespace scanlab::bench {

static std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

static std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  return "unknown";
}

static std::string host_name() {
  char name[256] = {0};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

std::string utc_timestamp() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::int64_t host_cache_bytes(int level) {
  std::int64_t best = 0;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    const std::string lvl = read_first_line(dir + "/level");
    if (lvl.empty()) break;
    if (std::stoi(lvl) != level || read_first_line(dir + "/type") == "Instruction") continue;
    std::string size = read_first_line(dir + "/size");  // "1024K"
    if (size.empty()) continue;
    std::int64_t scale = 1;
    if (size.back() == 'K') scale = 1024;
    if (size.back() == 'M') scale = 1024 * 1024;
    if (scale != 1) size.pop_back();
    best = std::max<std::int64_t>(best, std::stoll(size) * scale);
  }
  return best;
}

std::int64_t last_level_cache_bytes(BackendKind kind) {
#if defined(KOKKOS_ENABLE_CUDA)
  if (kind == BackendKind::cuda) {
    int device = 0, l2 = 0;
    if (cudaGetDevice(&device) == cudaSuccess && cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device) == cudaSuccess)
      return l2;
    return 0;
  }
#endif
  (void)kind;
  for (int level = 4; level >= 1; --level)
    if (auto bytes = host_cache_bytes(level)) return bytes;
  return 0;
}

nlohmann::json machine_context(const Backend& backend) {
  return {{"host", host_name()},
          {"device", backend.is_kokkos() ? device_name(backend.kind) : device_name(BackendKind::serial)},
          {"cpu_model", cpu_model()},
          {"backend", backend.name()},
          {"kokkos_configuration", kokkos_configuration()},
          {"git_commit", SCANLAB_GIT_COMMIT},
          {"scanlab_version", SCANLAB_VERSION},
          {"date_utc", utc_timestamp()}};
}

}  // namespace scanlab::bench
