// Validation, JSON, heuristics, candidates and the traffic model of the s7 kernel configs.
// No Kokkos here: the backend limits come from s7_max_team_size / s7_max_team_scratch_bytes.
#include "s7_config.hpp"

#include <algorithm>
#include <climits>
#include <set>
#include <stdexcept>

namespace scanlab::kernels {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

bool is_group_size(int g) { return g == 1 || g == 2 || g == 4 || g == 8; }

bool is_kokkos_backend(BackendKind b) {
  return b == BackendKind::serial || b == BackendKind::openmp || b == BackendKind::cuda;
}

// Copies j[key] into field when present, with a message naming the field on a type error.
template <class T>
void read_field(const nlohmann::json& j, const char* key, T& field) {
  auto it = j.find(key);
  if (it == j.end()) return;
  try {
    field = it->template get<T>();
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("config field '") + key + "': " + e.what());
  }
}

void reject_unknown(const nlohmann::json& j, const std::vector<std::string>& known, const char* what) {
  if (!j.is_object()) throw std::invalid_argument(std::string(what) + " config must be a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it)
    if (std::find(known.begin(), known.end(), it.key()) == known.end())
      throw std::invalid_argument(std::string("unknown ") + what + " config field '" + it.key() + "'");
}

int largest_group_at_most(std::int64_t rows, int cap) {
  int g = 1;
  while (g * 2 <= cap && g * 2 <= rows) g *= 2;
  return g;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// S7ScanConfig

std::vector<std::string> s7_scan_implementations() { return {"sequential", "chunked", "scanned"}; }

std::int64_t s7_scanned_walk_scratch_bytes(int walk_team_size) {
  return std::int64_t(sizeof(float)) * (std::int64_t(4) * walk_team_size + 1);
}

std::vector<std::string> s7_scan_config_fields() {
  return {"impl",     "team_size",  "items_per_thread", "states_per_thread", "dims_per_thread",
          "chunk_len", "walk_team_size", "fwd_dim_splits", "bwd_dim_splits"};
}

nlohmann::json S7ScanConfig::to_json() const {
  return {{"impl", impl},
          {"team_size", team_size},
          {"items_per_thread", items_per_thread},
          {"states_per_thread", states_per_thread},
          {"dims_per_thread", dims_per_thread},
          {"chunk_len", chunk_len},
          {"walk_team_size", walk_team_size},
          {"fwd_dim_splits", fwd_dim_splits},
          {"bwd_dim_splits", bwd_dim_splits}};
}

S7ScanConfig S7ScanConfig::from_json(const nlohmann::json& j) {
  reject_unknown(j, s7_scan_config_fields(), "s7_scan");
  S7ScanConfig c;
  read_field(j, "impl", c.impl);
  read_field(j, "team_size", c.team_size);
  read_field(j, "items_per_thread", c.items_per_thread);
  read_field(j, "states_per_thread", c.states_per_thread);
  read_field(j, "dims_per_thread", c.dims_per_thread);
  read_field(j, "chunk_len", c.chunk_len);
  read_field(j, "walk_team_size", c.walk_team_size);
  read_field(j, "fwd_dim_splits", c.fwd_dim_splits);
  read_field(j, "bwd_dim_splits", c.bwd_dim_splits);
  return c;
}

std::string S7ScanConfig::invalid_reason(const S7ScanProblem& p, BackendKind backend) const {
  const auto impls = s7_scan_implementations();
  if (std::find(impls.begin(), impls.end(), impl) == impls.end())
    return "unknown impl '" + impl + "' (expected sequential, chunked or scanned)";
  if (!is_kokkos_backend(backend)) return "backend " + to_string(backend) + " does not run Kokkos kernels";
  const int max_team = s7_max_team_size(backend);
  if (max_team <= 0) return "backend " + to_string(backend) + " is not compiled into this binary";
  if (team_size < 1 || team_size > max_team)
    return "team_size " + std::to_string(team_size) + " outside [1, " + std::to_string(max_team) + "] on " +
           to_string(backend);
  if (items_per_thread < 1 || items_per_thread > 1024)
    return "items_per_thread " + std::to_string(items_per_thread) + " outside [1, 1024]";
  if (!is_group_size(states_per_thread))
    return "states_per_thread " + std::to_string(states_per_thread) + " is not 1, 2, 4 or 8";
  if (!is_group_size(dims_per_thread))
    return "dims_per_thread " + std::to_string(dims_per_thread) + " is not 1, 2, 4 or 8";
  if (chunk_len < 1 || chunk_len > 65536) return "chunk_len " + std::to_string(chunk_len) + " outside [1, 65536]";
  // The walk kernels' own limit, not the space's: found by `check s7_scan` on the H200, where a
  // "scanned" team of 1024 passed this test against max_team and the launch refused it (512).
  const int max_walk_team = s7_walk_max_team_size(backend);
  if (walk_team_size < 1 || walk_team_size > max_walk_team)
    return "walk_team_size " + std::to_string(walk_team_size) + " outside [1, " + std::to_string(max_walk_team) +
           "] on " + to_string(backend) + " (the walk kernels' largest team)";
  for (const auto& [name, splits] : {std::pair<const char*, int>{"fwd_dim_splits", fwd_dim_splits},
                                     std::pair<const char*, int>{"bwd_dim_splits", bwd_dim_splits}})
    if (splits < 1 || splits > p.dim)
      return std::string(name) + " " + std::to_string(splits) + " outside [1, dim = " + std::to_string(p.dim) + "]";
  const bool scanned = impl == "scanned";
  if (scanned && chunk_len > kS7WalkBatch)
    return "chunk_len " + std::to_string(chunk_len) + " above " + std::to_string(kS7WalkBatch) +
           ": scanned keeps a thread's chunk in registers";
  if (scanned && s7_scanned_walk_scratch_bytes(walk_team_size) > s7_max_team_scratch_bytes(backend))
    return "walk_team_size " + std::to_string(walk_team_size) + " needs " +
           std::to_string(s7_scanned_walk_scratch_bytes(walk_team_size)) + " bytes of team scratch, more than " +
           std::to_string(s7_max_team_scratch_bytes(backend)) + " on " + to_string(backend);
  const std::int64_t rows = std::min<std::int64_t>(walk_team_size, p.dstate);
  // Kokkos takes the league size as an int.
  const std::int64_t tile = std::int64_t(team_size) * items_per_thread, tiles = ceil_div(p.seqlen, tile);
  const std::int64_t stream_league =
      p.batch * tiles *
      std::max(ceil_div(p.dstate, states_per_thread) * std::max(fwd_dim_splits, bwd_dim_splits),
               ceil_div(p.dim, dims_per_thread));
  const std::int64_t walk_league =
      scanned ? p.batch * p.dstate : p.batch * ceil_div(p.dstate, rows) * ceil_div(p.seqlen, chunk_len);
  if (stream_league > INT_MAX || walk_league > INT_MAX)
    return "more than 2^31 − 1 teams in one launch; raise team_size·items_per_thread or chunk_len";
  return "";
}

S7ScanConfig s7_scan_heuristic_config(const S7ScanProblem& p, BackendKind backend) {
  S7ScanConfig c;
  c.states_per_thread = largest_group_at_most(p.dstate, 4);
  c.dims_per_thread = largest_group_at_most(p.dim, 4);
  if (backend == BackendKind::cuda) {
    c.team_size = 128;
    c.items_per_thread = 1;
    // "scanned": one launch per walk, a thread per 16-step chunk, teams as wide as a row's
    // chunks (whole warps, at most the walk kernels' largest team: longer rows take rounds).
    c.chunk_len = kS7WalkBatch;
    const std::int64_t chunks = ceil_div(p.seqlen, c.chunk_len);
    const int compiled_max = s7_walk_max_team_size(backend);  // 0 where CUDA is not compiled in
    const int max_walk_team = compiled_max > 0 ? compiled_max : 1024;
    c.walk_team_size = 32;
    while (c.walk_team_size * 2 <= max_walk_team && c.walk_team_size < chunks) c.walk_team_size *= 2;
    c.impl = "scanned";
    // The Bu stage (tiles of 4·team_size steps where seqlen allows 16-byte accesses) and the C pass
    // (team_size steps): split dim until there are about `per_sm` teams per SM, at most 8 ways.
    // The Bu stage stops at 3: every split is one more b·N·L row for the walks to read, and at
    // (4,512,32,2048) 4 splits (512 teams) ran 1-3% faster than 8 (2026-12-01-s7).
    const auto splits_for = [&](std::int64_t teams, int per_sm) {
      int splits = 1;
      while (splits < 8 && splits * 2 <= p.dim && teams * splits < per_sm * 132) splits *= 2;
      return splits;
    };
    const std::int64_t state_groups = ceil_div(p.dstate, c.states_per_thread);
    const std::int64_t bu_tile = (p.seqlen % 4 == 0 ? 4 : 1) * std::int64_t(c.team_size);
    c.fwd_dim_splits = splits_for(p.batch * ceil_div(p.seqlen, bu_tile) * state_groups, 3);
    c.bwd_dim_splits = splits_for(p.batch * ceil_div(p.seqlen, c.team_size) * state_groups, 4);
  } else {
    c.impl = "sequential";
    c.team_size = 1;
    c.items_per_thread = 64;
    // The sequential walk's result does not depend on chunk_len; 16 lets `--impl chunked` and
    // `--impl scanned` (chunks ≤ 16 steps) run the heuristic with only the impl changed.
    c.chunk_len = kS7WalkBatch;
    c.walk_team_size = 1;
    c.fwd_dim_splits = 1;
    c.bwd_dim_splits = 1;
  }
  return c;
}

std::vector<S7ScanConfig> s7_scan_candidate_configs(const S7ScanProblem& p, BackendKind backend) {
  std::vector<S7ScanConfig> all;
  const S7ScanConfig h = s7_scan_heuristic_config(p, backend);
  all.push_back(h);
  const auto add = [&](S7ScanConfig c) { all.push_back(std::move(c)); };
  if (backend == BackendKind::cuda) {
    for (const char* impl : {"chunked", "sequential"})
      for (int chunk : {32, 64, 128})
        for (int group : {2, 4, 8}) {
          S7ScanConfig c = h;
          c.impl = impl;
          c.chunk_len = chunk;
          c.walk_team_size = int(std::min<std::int64_t>(32, p.dstate));  // rows per team
          c.states_per_thread = group;
          c.dims_per_thread = group;
          add(c);
        }
    for (int team : {64, 256}) {
      S7ScanConfig c = h;
      c.team_size = team;
      add(c);
    }
    for (int items : {2, 4}) {
      S7ScanConfig c = h;
      c.items_per_thread = items;
      add(c);
    }
    for (int splits : {1, 2, 4, 8}) {
      S7ScanConfig c = h;
      c.fwd_dim_splits = splits;
      add(c);
      c = h;
      c.bwd_dim_splits = splits;
      add(c);
    }
    for (int walk : {64, 128, 256, 512, 1024}) {  // scanned's chunks per round
      S7ScanConfig c = h;
      c.walk_team_size = walk;
      add(c);
    }
    {
      S7ScanConfig c = h;  // scanned with half-length chunks
      c.chunk_len = kS7WalkBatch / 2;
      c.walk_team_size = 2 * h.walk_team_size;
      add(c);
    }
  } else {
    for (const char* impl : {"sequential", "chunked"})
      for (int chunk : {64, 256})
        for (int group : {1, 4, 8})
          for (int items : {16, 64}) {
            S7ScanConfig c = h;
            c.impl = impl;
            c.chunk_len = chunk;
            c.states_per_thread = group;
            c.dims_per_thread = group;
            c.items_per_thread = items;
            add(c);
          }
  }
  std::vector<S7ScanConfig> out;
  std::set<std::string> seen;
  for (const auto& c : all) {
    if (!c.invalid_reason(p, backend).empty()) continue;
    if (seen.insert(c.to_json().dump()).second) out.push_back(c);
  }
  return out;
}

// Workspace: Bu (fwd_dim_splits·b·N·L) and X (b·N·L); with the backward DX (b·N·L) and G
// (bwd_dim_splits·b·N·L); "chunked" adds chunk_end, chunk_prod and carry (b·N·⌈L/chunk_len⌉ each);
// "scanned" keeps its summaries in team scratch.
// All float32.
std::int64_t s7_scan_workspace_bytes(const S7ScanProblem& p, const S7ScanConfig& c) {
  const std::int64_t bnl = p.batch * p.dstate * p.seqlen;
  std::int64_t floats = std::int64_t(c.fwd_dim_splits) * bnl + bnl;
  if (p.with_backward) floats += bnl + std::int64_t(c.bwd_dim_splits) * bnl;
  if (c.impl == "chunked") floats += 3 * p.batch * p.dstate * ceil_div(p.seqlen, c.chunk_len);
  return 4 * floats;
}

// Traffic beyond bytes_moved(), counting every load a stage issues as memory traffic (no credit
// for L2 hits between teams: an upper bound; on the H200 most re-reads below are L2 hits).
// With bNL = b·N·L, bHL = b·H·L, cs = b·N·⌈L/chunk_len⌉, gN = ⌈N/states_per_thread⌉,
// gH = ⌈H/dims_per_thread⌉, F = fwd_dim_splits, S = bwd_dim_splits, in float32 words (× 4 bytes):
//   forward  = bNL·(2F + 1 + gH) + (gN − 1)·bHL                     sequential, scanned
//              Bu's F splits written and read by the walk, X written, X read by every dim group
//              of the y stage; u re-read by every state group of the Bu stage
//            + bNL·(F + 1) + 6·cs                                    chunked in addition
//              Bu's splits and A read again by the apply walk; summaries written and read
//              (2·cs each), carries written and read
//   backward = bNL·(2S + S + 3 + gH) + (gN − 1)·bHL                   sequential, scanned
//              X read by the C pass of every split, G written and read, A read again for dA,
//              X read for x_{t−1}, DX written, DX read by every dim group of the B pass; dout
//              re-read by every state group of the C pass
//            + bNL·(S + 1) + 6·cs                                    chunked in addition
//              G and A read again by the apply walk; summaries and carries
double s7_scan_extra_bytes(const S7ScanProblem& p, const S7ScanConfig& c, Pass pass) {
  const double bnl = double(p.batch) * p.dstate * p.seqlen, bhl = double(p.batch) * p.dim * p.seqlen;
  const double cs = double(p.batch) * p.dstate * double(ceil_div(p.seqlen, c.chunk_len));
  const double gN = double(ceil_div(p.dstate, c.states_per_thread)), gH = double(ceil_div(p.dim, c.dims_per_thread));
  const double F = c.fwd_dim_splits, S = c.bwd_dim_splits;
  const bool chunked = c.impl == "chunked";
  double words = 0;
  if (pass == Pass::forward) {
    words = bnl * (2 * F + 1 + gH) + (gN - 1) * bhl;
    if (chunked) words += bnl * (F + 1) + 6 * cs;
  } else {
    words = bnl * (3 * S + 3 + gH) + (gN - 1) * bhl;
    if (chunked) words += bnl * (S + 1) + 6 * cs;
  }
  return 4 * words;
}

// ---------------------------------------------------------------------------------------------
// S7InnerConfig

std::vector<std::string> s7_inner_implementations() { return s7_scan_implementations(); }

std::vector<std::string> s7_inner_config_fields() {
  auto fields = s7_scan_config_fields();
  for (const char* f : {"elementwise_team_size", "elementwise_items_per_thread", "transpose_tile", "reduce_block",
                        "gemm_math"})
    fields.push_back(f);
  return fields;
}

nlohmann::json S7InnerConfig::to_json() const {
  nlohmann::json j = scan.to_json();
  j["elementwise_team_size"] = elementwise_team_size;
  j["elementwise_items_per_thread"] = elementwise_items_per_thread;
  j["transpose_tile"] = transpose_tile;
  j["reduce_block"] = reduce_block;
  j["gemm_math"] = gemm_math;
  return j;
}

S7InnerConfig S7InnerConfig::from_json(const nlohmann::json& j) {
  reject_unknown(j, s7_inner_config_fields(), "s7_inner");
  S7InnerConfig c;
  nlohmann::json scan_part = nlohmann::json::object();
  for (const auto& f : s7_scan_config_fields())
    if (j.contains(f)) scan_part[f] = j.at(f);
  c.scan = S7ScanConfig::from_json(scan_part);
  read_field(j, "elementwise_team_size", c.elementwise_team_size);
  read_field(j, "elementwise_items_per_thread", c.elementwise_items_per_thread);
  read_field(j, "transpose_tile", c.transpose_tile);
  read_field(j, "reduce_block", c.reduce_block);
  read_field(j, "gemm_math", c.gemm_math);
  return c;
}

std::string S7InnerConfig::invalid_reason(const S7InnerProblem& p, BackendKind backend) const {
  const std::string scan_reason = scan.invalid_reason(p.inner_scan(), backend);
  if (!scan_reason.empty()) return scan_reason;
  const int max_team = s7_max_team_size(backend);
  if (elementwise_team_size < 1 || elementwise_team_size > max_team)
    return "elementwise_team_size " + std::to_string(elementwise_team_size) + " outside [1, " +
           std::to_string(max_team) + "] on " + to_string(backend);
  if (elementwise_items_per_thread < 1 || elementwise_items_per_thread > 1 << 16)
    return "elementwise_items_per_thread " + std::to_string(elementwise_items_per_thread) + " outside [1, 65536]";
  if (transpose_tile < 1 || transpose_tile > 1024)
    return "transpose_tile " + std::to_string(transpose_tile) + " outside [1, 1024]";
  const std::int64_t tile_scratch = std::int64_t(transpose_tile) * (transpose_tile + 1) * 4 + 8;
  if (tile_scratch > s7_max_team_scratch_bytes(backend))
    return "transpose_tile " + std::to_string(transpose_tile) + " needs " + std::to_string(tile_scratch) +
           " bytes of team scratch, more than " + std::to_string(s7_max_team_scratch_bytes(backend)) + " on " +
           to_string(backend);
  if (reduce_block < 1) return "reduce_block " + std::to_string(reduce_block) + " is below 1";
  if (gemm_math != "default" && gemm_math != "pedantic")
    return "gemm_math '" + gemm_math + "' is not default or pedantic";
  const std::int64_t per_team = std::int64_t(elementwise_team_size) * elementwise_items_per_thread;
  if (ceil_div(p.batch * p.x_proj_rows() * p.seqlen, per_team) > INT_MAX ||
      p.batch * ceil_div(p.dim, transpose_tile) * ceil_div(p.seqlen, transpose_tile) > INT_MAX)
    return "more than 2^31 − 1 teams in one launch; raise elementwise_items_per_thread or transpose_tile";
  return "";
}

S7InnerConfig s7_inner_heuristic_config(const S7InnerProblem& p, BackendKind backend) {
  S7InnerConfig c;
  c.scan = s7_scan_heuristic_config(p.inner_scan(), backend);
  if (backend == BackendKind::cuda) {
    c.elementwise_team_size = 256;
    c.elementwise_items_per_thread = 4;
    c.transpose_tile = 32;
    c.reduce_block = 256;
  } else {
    c.elementwise_team_size = 1;
    c.elementwise_items_per_thread = 4096;
    c.transpose_tile = 32;
    c.reduce_block = 1024;
  }
  return c;
}

std::vector<S7InnerConfig> s7_inner_candidate_configs(const S7InnerProblem& p, BackendKind backend) {
  const S7InnerConfig h = s7_inner_heuristic_config(p, backend);
  std::vector<S7InnerConfig> out;
  std::set<std::string> seen;
  const auto add = [&](const S7InnerConfig& c) {
    if (c.invalid_reason(p, backend).empty() && seen.insert(c.to_json().dump()).second) out.push_back(c);
  };
  add(h);
  for (const auto& scan : s7_scan_candidate_configs(p.inner_scan(), backend)) {
    S7InnerConfig c = h;
    c.scan = scan;
    add(c);
  }
  if (backend == BackendKind::cuda) {
    for (int team : {128, 512}) {
      S7InnerConfig c = h;
      c.elementwise_team_size = team;
      add(c);
    }
    for (int tile : {16, 64}) {
      S7InnerConfig c = h;
      c.transpose_tile = tile;
      add(c);
    }
  }
  return out;
}

// The scan's workspace, plus the layer's own buffers (kernels/s7_inner.hpp): x (b·Dm·L), x_proj's
// output (b·R·L), A + base_params (b·N·L), y, gelu(y) and the gate's pre-activation (3·b·Dm·L);
// with the backward dy, dz, dg and dx (4·b·Dm·L), the gradient of x_proj's output (b·R·L, which
// also holds the scan's dA, dB, dC and dbias) and the dbase_params partials (b·N·⌈L/reduce_block⌉).
std::int64_t s7_inner_workspace_bytes(const S7InnerProblem& p, const S7InnerConfig& c) {
  const std::int64_t bdl = p.batch * p.dim * p.seqlen, brl = p.batch * p.x_proj_rows() * p.seqlen,
                     bnl = p.batch * p.dstate * p.seqlen;
  std::int64_t floats = bdl + brl + bnl + 3 * bdl;
  if (p.with_backward) floats += 4 * bdl + brl + p.batch * p.dstate * ceil_div(p.seqlen, c.reduce_block);
  return 4 * floats + s7_scan_workspace_bytes(p.inner_scan(), c.scan);
}

}  // namespace scanlab::kernels
