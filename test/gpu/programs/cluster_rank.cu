// cluster_rank.cu - each block writes where it sits in its thread-block
// cluster: out[block] = its rank in the cluster + 100 x the cluster's
// blocks (a plain launch is a cluster of one block). sm_90 and later.
extern "C" __global__ void cluster_rank(int *out) {
  unsigned rank, blocks;
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(blocks));
  if (threadIdx.x == 0) out[blockIdx.x] = int(rank + 100 * blocks);
}
