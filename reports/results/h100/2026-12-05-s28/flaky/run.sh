set -u
export CARRY_DIR=build/carry-s28
bash scripts/gpu/carry.sh unpack || exit 1
O=$1; mkdir -p $O
for i in 1 2 3; do
  for bin in build/baseline/scanlab build/cuda/scanlab; do
    n=$(timeout 60 $bin test --gtest_filter='KernelSelectiveScan.BitwiseRepeatableAndThreadCountIndependent' --gtest_brief=1 2>&1 | tee $O/$(basename $(dirname $bin))-$i.txt | grep -c differs)
    echo "$bin run $i: $n differing"
  done
done
for bin in build/baseline/scanlab build/cuda/scanlab; do
  n=$(OMP_NUM_THREADS=2 timeout 60 $bin test --gtest_filter='KernelSelectiveScan.BitwiseRepeatableAndThreadCountIndependent' --gtest_brief=1 2>&1 | grep -c differs)
  echo "$bin OMP_NUM_THREADS=2: $n differing"
done
nproc
