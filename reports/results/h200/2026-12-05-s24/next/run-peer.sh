#!/usr/bin/env bash
# The second call for branch s24-candidates (after run-ab.sh, the same carry plus .peers/src):
# the candidate's forward, backward and fwd+bwd beside mamba_ssm (built there from its sdist),
# GPU checks against the oracle, the CUDA kernel tests, and memcheck and racecheck of the two
# changed kernels: the direct forward in three time segments (§46's walk, summary pass included)
# and the interleaved backward in three (§47's chunk code).
#   DEADLINE=570 bash reports/results/h200/2026-12-05-s24/next/run-peer.sh $OUT/s24b
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
start_peer_build mamba_ssm
ceilings
beside_peer mamba_ssm
gpu_checks 28 300
sanitize fwd '{"direct_io":1,"state_split":1,"channels_per_team":128,"team_size":128,"time_tile":32,"fwd_time_segments":3}'
sanitize bwd '{"bwd_state_split":1,"bwd_channels_per_team":32,"bwd_team_size":32,"bwd_state_interleave":2,"chunk_len":8,"bwd_time_segments":3}'
call_end
