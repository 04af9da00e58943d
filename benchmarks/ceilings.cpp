// What is measured and why (DESIGN.md, measurement model; ../shared/H200-FACTS.md):
//  - copy: the native copy (cudaMemcpyAsync device to device; std::memcpy per host thread) is the
//    memory ceiling; the Kokkos variants show what Kokkos code reaches with each launch shape and
//    vector width, and kernels/streaming.hpp's default shape is timed through that header itself;
//  - read: one pass over a buffer far above the cache (memory read) and many passes over a working
//    set inside the last-level cache (L2 read), in Kokkos and, on CUDA, natively with __ldcg;
//  - FP32 FMA and SFU rates: independent dependency chains per thread, enough threads to fill the
//    machine, a runtime trip count so nothing folds, and a result written so nothing is dropped.
#include "ceilings.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "context.hpp"
#include "device_timer.hpp"
#include "kernels/sfu.hpp"
#include "kernels/streaming.hpp"
#include "random_fill.hpp"
#include "statistics.hpp"

namespace scanlab::bench {
namespace ceilings_detail {

using streaming::Float4;
using streaming::LaunchShape;
struct alignas(8) Float2 {
  float x, y;
};

struct Settings {
  std::int64_t copy_floats = 0;  // floats per copy buffer
  int repetitions = 0, warmups = 0;
  std::int64_t cache_bytes = 0;
  bool device = false;  // a GPU: launch shapes and thread counts sized for it
  int processors = 1;   // SMs on a GPU, threads on a host
};

template <class Space, class Launch>
Spread time_launches(const Space& space, const Settings& settings, const Launch& launch) {
  for (int w = 0; w < settings.warmups; ++w) launch();
  space.fence();
  IntervalTimer<Space> timer(space);
  std::vector<double> samples;
  for (int r = 0; r < settings.repetitions; ++r) {
    timer.start();
    launch();
    samples.push_back(timer.stop());
  }
  return spread_of(samples);
}

nlohmann::json rate_entry(const std::string& name, const std::string& kind, const std::string& how,
                          const Spread& time, double amount, const char* rate_key) {
  return {{"name", name}, {"kind", kind}, {"how", how}, {"amount", amount}, {"time_s", to_json(time)},
          {rate_key, amount / time.median}};
}

// ---------------------------------------------------------------- copy
template <class Space, class T, class Index>
void copy_range(const Space& space, const T* src, T* dst, std::int64_t count) {
  Kokkos::parallel_for(
      "scanlab_ceiling_copy_range", Kokkos::RangePolicy<Space, Kokkos::IndexType<Index>>(space, 0, Index(count)),
      KOKKOS_LAMBDA(const Index i) { dst[i] = src[i]; });
}

template <class Space, class T>
void copy_streaming(const Space& space, const T* src, T* dst, std::int64_t count, LaunchShape shape) {
  streaming::parallel_for_streaming(
      "scanlab_ceiling_copy_streaming", space, count, KOKKOS_LAMBDA(const std::int64_t i) { dst[i] = src[i]; }, shape);
}

template <class Space>
void poison(const Space& space, float* data, std::int64_t n) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Kokkos::parallel_for(
      "scanlab_ceiling_poison", Kokkos::RangePolicy<Space>(space, 0, n), KOKKOS_LAMBDA(const std::int64_t i) { data[i] = nan; });
}

template <class Space>
std::int64_t count_mismatches(const Space& space, const float* a, const float* b, std::int64_t n) {
  std::int64_t bad = 0;
  Kokkos::parallel_reduce(
      "scanlab_ceiling_check_copy", Kokkos::RangePolicy<Space>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& acc) { acc += !(a[i] == b[i]); }, bad);
  space.fence();
  return bad;
}

// Read probes: `passes` passes over `chunks` chunks of per_chunk 16-byte vectors. interleaved:
// team t reads chunk t % chunks (concurrent teams read different chunks, so a GPU's per-SM L1 does
// not serve the repeats); otherwise team t reads chunk t / passes (a host thread re-reads its own
// chunk while it sits in its private cache). The loaded words are folded by XOR (one-cycle
// latency, so the fold never limits a host core the way a floating-point sum chain does) and
// stored only when the fold hits one particular value, so the loads cannot be dropped and no
// partial results add traffic.
struct alignas(16) Word4 {
  std::uint32_t x, y, z, w;
};
constexpr std::uint32_t kRareFold = 0x9E3779B9u;

#if defined(KOKKOS_ENABLE_CUDA)
// __ldcg caches in L2 only, so the L2 probe measures L2 and not each SM's L1.
__global__ void native_read_kernel(const uint4* src, std::int64_t per_chunk, std::int64_t chunks, std::uint32_t* sink) {
  const std::int64_t begin = (std::int64_t(blockIdx.x) % chunks) * per_chunk;
  std::uint32_t fold = 0;
  for (std::int64_t i = begin + threadIdx.x; i < begin + per_chunk; i += blockDim.x) {
    const uint4 v = __ldcg(src + i);
    fold ^= (v.x ^ v.y) ^ (v.z ^ v.w);
  }
  if (fold == kRareFold) sink[0] = fold;
}
#endif

template <class Space>
void read_team(const Space& space, const Word4* src, std::int64_t per_chunk, std::int64_t chunks, std::int64_t passes,
               int team_size, bool interleaved, std::uint32_t* sink) {
  using Policy = Kokkos::TeamPolicy<Space>;
  Kokkos::parallel_for(
      "scanlab_ceiling_read", Policy(space, static_cast<int>(chunks * passes), team_size),
      KOKKOS_LAMBDA(const typename Policy::member_type& team) {
        const std::int64_t t = team.league_rank();
        const std::int64_t begin = (interleaved ? t % chunks : t / passes) * per_chunk;
        std::uint32_t fold = 0;
        for (std::int64_t i = begin + team.team_rank(); i < begin + per_chunk; i += team_size) {
          const Word4 v = src[i];
          fold ^= (v.x ^ v.y) ^ (v.z ^ v.w);
        }
        if (fold == kRareFold) sink[0] = fold;
      });
}

// ---------------------------------------------------------------- arithmetic
// kFmaChains independent chains per thread, enough to cover the FMA latency. On a host this
// build's compiler keeps them scalar (no -march flags; checked in the object code), so the host
// FP32 figure is the scalar rate: a BLAS call (s7_inner's GEMMs) can exceed it.
constexpr int kFmaChains = 16;

template <class Space>
void fma_chains(const Space& space, std::int64_t threads, int iterations, float b, float c, float* out) {
  Kokkos::parallel_for(
      "scanlab_ceiling_fma", Kokkos::RangePolicy<Space>(space, 0, threads), KOKKOS_LAMBDA(const std::int64_t i) {
        float a[kFmaChains];
        for (int j = 0; j < kFmaChains; ++j) a[j] = float(i & 1023) * 1e-4f + 0.05f * float(j);
        for (int k = 0; k < iterations; ++k)
          for (int j = 0; j < kFmaChains; ++j) a[j] = a[j] * b + c;
        float sum = 0;
        for (int j = 0; j < kFmaChains; ++j) sum += a[j];
        out[i] = sum;
      });
}

enum class SfuOp { exp2, log2, rcp };

// Each chain maps a bounded interval into itself, so values stay normal for any trip count:
// exp2: x -> 2^x - 1.5 keeps [-1, 0.5]; log2: x -> log2(x) + 2 keeps [2, 4]; rcp: x -> 1/x + 1
// keeps [1.5, 2]. The add runs on the FMA pipe, not the SFU.
template <class Space, SfuOp op>
void sfu_chains(const Space& space, std::int64_t threads, int iterations, float shift, float* out) {
  Kokkos::parallel_for(
      "scanlab_ceiling_sfu", Kokkos::RangePolicy<Space>(space, 0, threads), KOKKOS_LAMBDA(const std::int64_t i) {
        const float jitter = float(i & 255) * (1.0f / 1024.0f);
        float x0, x1, x2, x3;
        if (op == SfuOp::exp2) { x0 = -0.9f + jitter; x1 = -0.5f + jitter; x2 = -0.2f + jitter; x3 = 0.1f + jitter; }
        else if (op == SfuOp::log2) { x0 = 2.1f + jitter; x1 = 2.5f + jitter; x2 = 3.0f + jitter; x3 = 3.5f + jitter; }
        else { x0 = 1.55f + jitter * 0.1f; x1 = 1.65f + jitter * 0.1f; x2 = 1.75f + jitter * 0.1f; x3 = 1.85f + jitter * 0.1f; }
        for (int k = 0; k < iterations; ++k) {
          if (op == SfuOp::exp2) {
            x0 = sfu_exp2(x0) - shift; x1 = sfu_exp2(x1) - shift; x2 = sfu_exp2(x2) - shift; x3 = sfu_exp2(x3) - shift;
          } else if (op == SfuOp::log2) {
            x0 = sfu_log2(x0) + shift; x1 = sfu_log2(x1) + shift; x2 = sfu_log2(x2) + shift; x3 = sfu_log2(x3) + shift;
          } else {
            x0 = sfu_rcp(x0) + shift; x1 = sfu_rcp(x1) + shift; x2 = sfu_rcp(x2) + shift; x3 = sfu_rcp(x3) + shift;
          }
        }
        out[i] = (x0 + x1) + (x2 + x3);
      });
}

template <class Space>
float host_value(const Space& space, const float* device_data) {
  float value = 0;
  Kokkos::View<const float, typename Space::memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>> one(device_data);
  Kokkos::View<float, Kokkos::HostSpace> host("scanlab_ceiling_host_value");
  space.fence();
  Kokkos::deep_copy(host, one);
  value = host();
  return value;
}

// ---------------------------------------------------------------- the driver
template <class Space>
nlohmann::json measure_on(const Backend& backend, const Settings& s, nlohmann::json& method) {
  const Space space;
  using Memory = typename Space::memory_space;
  const std::int64_t n = s.copy_floats;  // a multiple of 4096
  Kokkos::View<float*, Memory> src_view(Kokkos::view_alloc("scanlab_ceiling_src", Kokkos::WithoutInitializing), n);
  Kokkos::View<float*, Memory> dst_view(Kokkos::view_alloc("scanlab_ceiling_dst", Kokkos::WithoutInitializing), n);
  float* src = src_view.data();
  float* dst = dst_view.data();
  fill_uniform(space, src_view, 20261129, -1.0, 1.0);
  space.fence();

  nlohmann::json out;
  const double copy_bytes = 2.0 * 4.0 * double(n);  // read + written

  // -------- native copy
  Spread native_time;
  std::string native_how;
  poison(space, dst, n);
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same<Space, Kokkos::Cuda>::value) {
    native_how = "cudaMemcpyAsync device to device on the space's stream";
    native_time = time_launches(space, s, [&] {
      cuda_check(cudaMemcpyAsync(dst, src, std::size_t(n) * 4, cudaMemcpyDeviceToDevice, space.cuda_stream()),
                 "cudaMemcpyAsync");
    });
  } else
#endif
  {
    const int threads = s.processors;
    native_how = "std::memcpy of one contiguous slice per host thread (" + std::to_string(threads) + ")";
    native_time = time_launches(space, s, [&] {
      Kokkos::parallel_for(
          "scanlab_ceiling_memcpy", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, threads), [=](int t) {
            const std::int64_t begin = n * t / threads, end = n * (t + 1) / threads;
            std::memcpy(dst + begin, src + begin, std::size_t(end - begin) * 4);
          });
    });
  }
  if (auto bad = count_mismatches(space, src, dst, n))
    throw std::runtime_error("ceilings: native copy left " + std::to_string(bad) + " elements wrong");
  out["copy_native"] = rate_entry("native", "native", native_how, native_time, copy_bytes, "bytes_per_s");
  const double native_rate = copy_bytes / native_time.median;

  // -------- Kokkos copy variants
  nlohmann::json variants = nlohmann::json::array();
  const auto add_variant = [&](const std::string& name, const std::string& how, int vector_bytes, int team_size,
                               std::int64_t vectors_per_team, const auto& launch) {
    poison(space, dst, n);
    const Spread t = time_launches(space, s, launch);
    if (auto bad = count_mismatches(space, src, dst, n))
      throw std::runtime_error("ceilings: copy variant " + name + " left " + std::to_string(bad) + " elements wrong");
    auto entry = rate_entry(name, "kokkos", how, t, copy_bytes, "bytes_per_s");
    entry["vector_bytes"] = vector_bytes;
    if (team_size > 0) {
      entry["team_size"] = team_size;
      entry["vectors_per_team"] = vectors_per_team;
    }
    entry["fraction_of_native"] = (copy_bytes / t.median) / native_rate;
    variants.push_back(entry);
  };
  const auto* src4 = reinterpret_cast<const Float4*>(src);
  auto* dst4 = reinterpret_cast<Float4*>(dst);
  const auto* src2 = reinterpret_cast<const Float2*>(src);
  auto* dst2 = reinterpret_cast<Float2*>(dst);
  add_variant("range_float_int64", "RangePolicy, one float per index, 64-bit index", 4, 0, 0,
              [&] { copy_range<Space, float, std::int64_t>(space, src, dst, n); });
  add_variant("range_float_int32", "RangePolicy<IndexType<int>>, one float per index", 4, 0, 0,
              [&] { copy_range<Space, float, int>(space, src, dst, n); });
  add_variant("range_float4_int32", "RangePolicy<IndexType<int>> over 16-byte vectors", 16, 0, 0,
              [&] { copy_range<Space, Float4, int>(space, src4, dst4, n / 4); });
  add_variant("range_float4_int64", "RangePolicy over 16-byte vectors, 64-bit index", 16, 0, 0,
              [&] { copy_range<Space, Float4, std::int64_t>(space, src4, dst4, n / 4); });
  const LaunchShape header_shape = streaming::default_launch_shape<Space>();
  std::vector<int> team_sizes = s.device ? std::vector<int>{128, 256, 512} : std::vector<int>{1};
  std::vector<std::int64_t> per_team = s.device ? std::vector<std::int64_t>{256, 1024, 4096}
                                                : std::vector<std::int64_t>{1024, 1 << 14, 1 << 16};
  for (int ts : team_sizes)
    for (std::int64_t pt : per_team) {
      const LaunchShape shape{ts, pt};
      add_variant("team_float4_" + std::to_string(ts) + "x" + std::to_string(pt),
                  "streaming::parallel_for_streaming: TeamPolicy(n/" + std::to_string(pt) + ", " + std::to_string(ts) +
                      ") + TeamThreadRange over 16-byte vectors",
                  16, ts, pt, [&] { copy_streaming<Space, Float4>(space, src4, dst4, n / 4, shape); });
    }
  {
    const LaunchShape scalar_shape{header_shape.team_size, header_shape.vectors_per_team * 4};
    add_variant("team_float_" + std::to_string(scalar_shape.team_size) + "x" + std::to_string(scalar_shape.vectors_per_team),
                "the header's launch shape over single floats", 4, scalar_shape.team_size, scalar_shape.vectors_per_team,
                [&] { copy_streaming<Space, float>(space, src, dst, n, scalar_shape); });
    const LaunchShape pair_shape{header_shape.team_size, header_shape.vectors_per_team * 2};
    add_variant("team_float2_" + std::to_string(pair_shape.team_size) + "x" + std::to_string(pair_shape.vectors_per_team),
                "the header's launch shape over 8-byte vectors", 8, pair_shape.team_size, pair_shape.vectors_per_team,
                [&] { copy_streaming<Space, Float2>(space, src2, dst2, n / 2, pair_shape); });
  }
  add_variant("deep_copy", "Kokkos::deep_copy(space, dst, src)", 0, 0, 0, [&] { Kokkos::deep_copy(space, dst_view, src_view); });
  out["copy_variants"] = variants;

  // The best launch pattern a kernel can use (deep_copy is not one), and the header's own shape.
  nlohmann::json best;
  for (const auto& v : variants)
    if (v["name"] != "deep_copy" && (best.is_null() || v["bytes_per_s"].get<double>() > best["bytes_per_s"].get<double>()))
      best = v;
  out["copy_kokkos"] = best;
  const std::string header_name =
      "team_float4_" + std::to_string(header_shape.team_size) + "x" + std::to_string(header_shape.vectors_per_team);
  for (const auto& v : variants)
    if (v["name"] == header_name) {
      out["streaming_pattern"] = {{"header", "kernels/streaming.hpp"},
                                  {"variant", header_name},
                                  {"team_size", header_shape.team_size},
                                  {"vectors_per_team", header_shape.vectors_per_team},
                                  {"vector_bytes", 16},
                                  {"bytes_per_s", v["bytes_per_s"]},
                                  {"fraction_of_native", v["fraction_of_native"]},
                                  {"best_variant", best["name"]},
                                  {"best_fraction_of_native", best["fraction_of_native"]}};
    }

  // -------- reads: memory (one pass over the big buffer) and L2 (passes over a cached set)
  const std::int64_t vectors = n / 4;
  const LaunchShape read_shape = header_shape;
  Kokkos::View<std::uint32_t*, Memory> sink_view("scanlab_ceiling_sink", 1);
  std::uint32_t* sink = sink_view.data();
  const auto* words = reinterpret_cast<const Word4*>(src);
  nlohmann::json hbm_variants = nlohmann::json::array(), l2_variants = nlohmann::json::array();
  {
    const std::int64_t per_chunk = read_shape.vectors_per_team, chunks = vectors / per_chunk;
    const double bytes = 16.0 * double(per_chunk * chunks);
    auto t = time_launches(space, s, [&] { read_team(space, words, per_chunk, chunks, 1, read_shape.team_size, true, sink); });
    hbm_variants.push_back(rate_entry("kokkos_team_float4", "kokkos",
                                      "one pass over " + std::to_string(std::int64_t(bytes) >> 20) +
                                          " MiB with the streaming launch shape, 16-byte loads",
                                      t, bytes, "bytes_per_s"));
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same<Space, Kokkos::Cuda>::value) {
      auto tn = time_launches(space, s, [&] {
        native_read_kernel<<<unsigned(chunks), 256, 0, space.cuda_stream()>>>(reinterpret_cast<const uint4*>(src),
                                                                             per_chunk, chunks, sink);
        cuda_check(cudaGetLastError(), "native_read_kernel launch");
      });
      hbm_variants.push_back(rate_entry("native_ldcg_float4", "native", "CUDA kernel, __ldcg float4, one pass", tn, bytes,
                                        "bytes_per_s"));
    }
#endif
  }
  // L2: working sets of a quarter and a half of the cache (on a host: of each core's private L2,
  // one set per thread), read until about four times the memory buffer's bytes have passed.
  for (double fraction : {0.25, 0.5}) {
    if (s.cache_bytes <= 0) break;
    std::int64_t per_chunk, chunks;
    if (s.device) {
      per_chunk = read_shape.vectors_per_team;
      chunks = std::int64_t(fraction * double(s.cache_bytes) / 16.0) / per_chunk;
    } else {
      per_chunk = std::int64_t(fraction * double(s.cache_bytes) / 16.0);
      chunks = s.processors;
    }
    const std::int64_t set_vectors = per_chunk * chunks;
    if (per_chunk <= 0 || chunks <= 0 || set_vectors > vectors) continue;
    const std::int64_t passes = std::max<std::int64_t>(1, 4 * vectors / set_vectors);
    const double bytes = 16.0 * double(set_vectors) * double(passes);
    const int team_size = s.device ? read_shape.team_size : 1;
    auto t = time_launches(space, s, [&] { read_team(space, words, per_chunk, chunks, passes, team_size, s.device, sink); });
    const std::string set_text = std::to_string((16 * set_vectors) >> 10) + " KiB working set" +
                                 (s.device ? "" : " (" + std::to_string((16 * per_chunk) >> 10) + " KiB per thread)");
    const std::string pct = std::to_string(int(fraction * 100)) + "pct";
    l2_variants.push_back(rate_entry("kokkos_team_float4_" + pct, "kokkos",
                                     set_text + ", " + std::to_string(passes) + " passes, 16-byte loads", t, bytes,
                                     "bytes_per_s"));
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same<Space, Kokkos::Cuda>::value) {
      auto tn = time_launches(space, s, [&] {
        native_read_kernel<<<unsigned(chunks * passes), 256, 0, space.cuda_stream()>>>(
            reinterpret_cast<const uint4*>(src), per_chunk, chunks, sink);
        cuda_check(cudaGetLastError(), "native_read_kernel launch");
      });
      l2_variants.push_back(rate_entry("native_ldcg_float4_" + pct, "native",
                                       set_text + ", " + std::to_string(passes) + " passes, __ldcg float4", tn, bytes,
                                       "bytes_per_s"));
    }
#endif
  }
  const auto best_of = [](const nlohmann::json& list, const char* key) {
    nlohmann::json best;
    for (const auto& v : list)
      if (best.is_null() || v[key].get<double>() > best[key].get<double>()) best = v;
    return best;
  };
  out["memory_read"] = best_of(hbm_variants, "bytes_per_s");
  out["memory_read"]["variants"] = hbm_variants;
  if (!l2_variants.empty()) {
    out["l2_read"] = best_of(l2_variants, "bytes_per_s");
    out["l2_read"]["variants"] = l2_variants;
  }

  // -------- FP32 FMA and SFU
  const std::int64_t threads = s.device ? std::int64_t(s.processors) * 2048 * 2 : std::int64_t(s.processors) * 1024;
  Kokkos::View<float*, Memory> results_view(Kokkos::view_alloc("scanlab_ceiling_results", Kokkos::WithoutInitializing),
                                            threads);
  float* results = results_view.data();
  {
    const int iterations = s.device ? 2048 : 1024;
    auto t = time_launches(space, s, [&] { fma_chains(space, threads, iterations, 0.999f, 0.001f, results); });
    const double fmas = double(threads) * iterations * kFmaChains;
    auto entry = rate_entry("fma_chains", "kokkos",
                            std::to_string(kFmaChains) + " independent a = a*b + c chains per thread, " +
                                std::to_string(threads) + " threads, " +
                                std::to_string(iterations) + " steps",
                            t, 2 * fmas, "flops_per_s");
    entry["fma_per_s"] = fmas / t.median;
    if (!std::isfinite(host_value(space, results))) throw std::runtime_error("ceilings: FMA chains produced a non-finite value");
    out["fp32_fma"] = entry;
  }
  {
    const int iterations = s.device ? 1024 : 256;
    const double ops = double(threads) * iterations * 4;
    nlohmann::json sfu;
    const auto chain_text = [&](const char* f) {
      return std::string("4 independent chains of ") + f + " per thread, " + std::to_string(threads) + " threads, " +
             std::to_string(iterations) + " steps";
    };
    auto te = time_launches(space, s, [&] { sfu_chains<Space, SfuOp::exp2>(space, threads, iterations, 1.5f, results); });
    if (!std::isfinite(host_value(space, results))) throw std::runtime_error("ceilings: exp2 chains produced a non-finite value");
    sfu["exp2"] = rate_entry("sfu_exp2", "kokkos", chain_text("scanlab::sfu_exp2"), te, ops, "ops_per_s");
    auto tl = time_launches(space, s, [&] { sfu_chains<Space, SfuOp::log2>(space, threads, iterations, 2.0f, results); });
    if (!std::isfinite(host_value(space, results))) throw std::runtime_error("ceilings: log2 chains produced a non-finite value");
    sfu["log2"] = rate_entry("sfu_log2", "kokkos", chain_text("scanlab::sfu_log2"), tl, ops, "ops_per_s");
    auto tr = time_launches(space, s, [&] { sfu_chains<Space, SfuOp::rcp>(space, threads, iterations, 1.0f, results); });
    if (!std::isfinite(host_value(space, results))) throw std::runtime_error("ceilings: rcp chains produced a non-finite value");
    sfu["rcp"] = rate_entry("sfu_rcp", "kokkos", chain_text("scanlab::sfu_rcp"), tr, ops, "ops_per_s");
    out["sfu"] = sfu;
  }

  // The memory ceiling is the fastest copy measured: the native one on a GPU in practice; on a
  // host, where std::memcpy's non-temporal stores can lose to a cached copy, whichever won.
  double memory_rate = native_rate;
  std::string memory_source = "copy_native";
  for (const auto& v : variants)
    if (v["bytes_per_s"].get<double>() > memory_rate) {
      memory_rate = v["bytes_per_s"].get<double>();
      memory_source = "copy_variants." + v["name"].get<std::string>();
    }
  const bool gpu = s.device;
  out["roofline"] = {
      {"memory_label", gpu ? "HBM" : "DRAM"},
      {"memory_bytes_per_s", memory_rate},
      {"memory_source", memory_source},
      {"l2_bytes_per_s", out.contains("l2_read") ? out["l2_read"]["bytes_per_s"] : nlohmann::json(nullptr)},
      {"l2_source", "l2_read"},
      {"fp32_flops_per_s", out["fp32_fma"]["flops_per_s"]},
      {"fp32_source", "fp32_fma"},
      {"sfu_ops_per_s", out["sfu"]["exp2"]["ops_per_s"]},
      {"sfu_source", "sfu.exp2"},
  };
  method["copy_buffer_bytes"] = 4 * n;
  method["cache_bytes"] = s.cache_bytes;
  method["processors"] = s.processors;
  (void)backend;
  return out;
}

}  // namespace ceilings_detail

nlohmann::json measure_ceilings(const Backend& backend, const CeilingOptions& options) {
  using namespace ceilings_detail;
  if (!backend.is_kokkos())
    throw std::invalid_argument("ceilings are measured on a Kokkos backend (serial, openmp, cuda or auto), not '" +
                                backend.name() + "'");
  Settings s;
  s.device = backend.kind == BackendKind::cuda;
  s.cache_bytes = last_level_cache_bytes(backend.kind);
  if (!s.device && s.cache_bytes > 0) {
    // On a host the L2 probe's working set is per thread: the private L2, not the shared L3.
    const std::int64_t l2 = host_cache_bytes(2);
    if (l2 > 0) s.cache_bytes = l2;
  }
  const std::int64_t llc = last_level_cache_bytes(backend.kind);
  s.processors = 1;
#if defined(KOKKOS_ENABLE_CUDA)
  if (s.device) {
    int device = 0;
    cuda_check(cudaGetDevice(&device), "cudaGetDevice");
    cuda_check(cudaDeviceGetAttribute(&s.processors, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  }
#endif
  if (backend.kind == BackendKind::openmp) s.processors = Kokkos::DefaultHostExecutionSpace::concurrency();
  std::int64_t bytes = options.copy_bytes;
  if (bytes <= 0) {
    if (options.quick) bytes = std::int64_t(32) << 20;
    else if (s.device) bytes = std::int64_t(1) << 30;
    else bytes = std::max<std::int64_t>(4 * llc, std::int64_t(64) << 20);
  }
  s.copy_floats = std::max<std::int64_t>(4096, bytes / 4 / 4096 * 4096);
  s.repetitions = options.repetitions > 0 ? options.repetitions : (options.quick ? 3 : (s.device ? 20 : 10));
  s.warmups = options.quick ? 1 : std::max(0, options.warmups);
  if (options.quick) s.cache_bytes = std::min<std::int64_t>(s.cache_bytes, 1 << 20);

  nlohmann::json method = {
      {"timer", s.device ? "CUDA events on the space's stream" : "fence, then steady_clock, then fence"},
      {"warmups", s.warmups},
      {"repetitions", s.repetitions},
      {"statistic", "median of repetitions; q1/q3 recorded"},
      {"data", "uniform random in [-1, 1) from a counter hash (splitmix64); never zeros; copies poisoned with NaN "
               "first and checked element by element after"},
      {"copy_bytes_counted", "bytes read + bytes written"},
      {"quick", options.quick},
  };
  nlohmann::json measured;
  switch (backend.kind) {
#if defined(KOKKOS_ENABLE_SERIAL)
    case BackendKind::serial: measured = measure_on<Kokkos::Serial>(backend, s, method); break;
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
    case BackendKind::openmp: measured = measure_on<Kokkos::OpenMP>(backend, s, method); break;
#endif
#if defined(KOKKOS_ENABLE_CUDA)
    case BackendKind::cuda: measured = measure_on<Kokkos::Cuda>(backend, s, method); break;
#endif
    default: throw std::invalid_argument("backend " + backend.name() + " is not compiled into this binary");
  }
  nlohmann::json result = {{"schema", "scanlab.ceilings/1"}, {"machine", machine_context(backend)}, {"method", method}};
  result.update(measured);
  return result;
}

Roofline roofline_of(const nlohmann::json& ceilings) {
  if (!ceilings.is_object() || !ceilings.contains("roofline") || !ceilings["roofline"].is_object())
    throw std::invalid_argument("ceilings JSON has no 'roofline' object (was it written by `scanlab ceilings`?)");
  const auto& r = ceilings["roofline"];
  const auto positive = [&](const char* key) {
    if (!r.contains(key) || !r[key].is_number() || !(r[key].get<double>() > 0))
      throw std::invalid_argument(std::string("ceilings JSON: roofline.") + key + " is missing or not positive");
    return r[key].get<double>();
  };
  Roofline out;
  out.memory_bytes_per_s = positive("memory_bytes_per_s");
  out.l2_bytes_per_s = positive("l2_bytes_per_s");
  out.fp32_flops_per_s = positive("fp32_flops_per_s");
  out.sfu_ops_per_s = positive("sfu_ops_per_s");
  out.memory_label = r.value("memory_label", std::string("memory"));
  return out;
}

}  // namespace scanlab::bench
