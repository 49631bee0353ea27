/* runtime.h - the hostjit C runtime: memory, launches, stats and records. */
#ifndef HOSTJIT_RUNTIME_H
#define HOSTJIT_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes. Every int32_t-returning entry point returns one of these; on
 * failure hj_last_error() explains it. */
typedef enum hj_status {
  HJ_OK = 0,
  HJ_ERR_INVALID_ARGUMENT = 1, /* a caller or program mistake */
  HJ_ERR_OUT_OF_MEMORY = 2,    /* after releasing cached blocks and retrying once */
  HJ_ERR_NOT_FOUND = 3,        /* a kernel, symbol or library that does not exist */
  HJ_ERR_BACKEND = 4,          /* the driver or a backend call failed */
  HJ_ERR_NOT_ZEROED = 5,       /* HOSTJIT_CHECK_ZEROED found a non-zero buffer */
  HJ_ERR_NO_DRIVER = 6,        /* no CUDA driver on this machine */
  HJ_ERR_INTERNAL = 7,         /* an exception or broken invariant inside */
  HJ_ERR_INJECTED = 8          /* a failure injected on purpose (hj_inject_failure, HOSTJIT_FAIL_AT) */
} hj_status;

typedef enum hj_dtype {
#define HJ_DTYPE(name, ident, code, bits, kind) HJ_DTYPE_##name,
#include "hostjit/dtypes.def"
#undef HJ_DTYPE
  HJ_DTYPE_COUNT
} hj_dtype;

/* hj_alloc flags (the allocation contract, docs/allocation-contract.md). */
enum {
  HJ_ALLOC_ZERO_INIT = 1u,      /* reads as zero when the first kernel starts */
  HJ_ALLOC_RESETS_TO_ZERO = 2u, /* the kernels leave it zero: arena, no memset */
  HJ_ALLOC_OUTPUT = 4u          /* returned to the caller: never from the arena, even
                                   with reuse_zeroed_memory (its contents are results) */
};

/* hj_kernel_desc launch flags: how every launch of the kernel is made. */
enum {
  HJ_LAUNCH_COOPERATIVE = 1u, /* a cooperative grid: all blocks co-resident, so
                                 a grid-wide barrier works; the occupancy is
                                 checked before the first launch of a grid */
  HJ_LAUNCH_PDL = 2u,         /* programmatic dependent launch: may start while
                                 the previous kernel on its stream finishes */
  HJ_LAUNCH_BOUNDS_CHECKED = 4u /* blocks past the kernel's work do nothing: graph
                                   mode may round its grid up to a power of two
                                   (not with COOPERATIVE or a cluster) */
};

/* hj_matmul: C = alpha * op(A) @ op(B) + beta * C (+ bias), per batch.
 * dims is an int64_t array of HJ_MM_DIMS values indexed by these: each
 * operand as it is stored, its batches (1: one matrix for every batch),
 * rows and columns, and its batch, row and column strides in elements. A
 * stored is m x k, or k x m with HJ_MM_TRANSPOSE_A (op(A) its transpose);
 * B k x n, or n x k with HJ_MM_TRANSPOSE_B; C m x n. The runtime checks
 * that they agree and names the statement when they do not, and refuses a
 * C whose memory overlaps A's, B's or the bias's. */
enum {
  HJ_MM_A_BATCHES = 0, HJ_MM_A_ROWS, HJ_MM_A_COLS, HJ_MM_A_BATCH_STRIDE, HJ_MM_A_ROW_STRIDE, HJ_MM_A_COL_STRIDE,
  HJ_MM_B_BATCHES, HJ_MM_B_ROWS, HJ_MM_B_COLS, HJ_MM_B_BATCH_STRIDE, HJ_MM_B_ROW_STRIDE, HJ_MM_B_COL_STRIDE,
  HJ_MM_C_BATCHES, HJ_MM_C_ROWS, HJ_MM_C_COLS, HJ_MM_C_BATCH_STRIDE, HJ_MM_C_ROW_STRIDE, HJ_MM_C_COL_STRIDE,
  HJ_MM_BIAS_ELEMS,      /* elements of the bias (n), 0 without one */
  HJ_MM_BIAS_STRIDE,     /* the bias's element stride: 1 (contiguous) when n > 1 */
  HJ_MM_WORKSPACE_BYTES, /* bytes of the workspace buffer (0: none) */
  HJ_MM_DIMS
};
enum {
  HJ_MM_TRANSPOSE_A = 1u,
  HJ_MM_TRANSPOSE_B = 2u,
  HJ_MM_BIAS = 4u /* bias: n elements of C's dtype, added to every row */
};

/* The runtime's limits, declared once: the verifier holds programs to them,
 * and the runtime's entry points refuse what goes beyond them. */
enum {
  HJ_MAX_RANK = 8,              /* dims of a buffer, a tensor or a tensor struct */
  HJ_MAX_STREAMS = 64,          /* streams of a context, its own (0) included */
  HJ_MAX_EVENTS = 4096,         /* events of a context */
  HJ_MAX_BLOCK_THREADS = 1024,  /* threads of a block, and along each of its dims */
  HJ_MAX_GRID_DIM = 2147483647, /* blocks along a grid dim; also the most shared memory bytes */
  HJ_MAX_SMEM_BYTES = 2147483647,
  HJ_MAX_CLUSTER_BLOCKS = 16    /* blocks of a thread-block cluster (8 portable, 16 on sm_90) */
};
/* The most bytes one buffer may take (larger sizes are reported as overflowing). */
#define HJ_MAX_BUFFER_BYTES (UINT64_C(1) << 62)

typedef enum hj_backend_kind {
  HJ_BACKEND_HOST = 0, /* device memory is host memory; kernels are host functions */
  HJ_BACKEND_CUDA = 1, /* CUDA driver API, loaded at run time */
  HJ_BACKEND_AUTO = 2  /* CUDA when a driver and device exist, else host */
} hj_backend_kind;

/* Kernel parameter kinds: how many bytes each argument value has. */
typedef enum hj_param_kind {
  HJ_PARAM_PTR = 0, /* a tensor's data pointer */
  HJ_PARAM_I32 = 1,
  HJ_PARAM_I64 = 2,
  HJ_PARAM_F32 = 3,
  HJ_PARAM_F64 = 4,
  HJ_PARAM_BOOL = 5, /* one byte, 0 or 1 */
  /* A tensor struct, as nvFuser kernels take: { T *data; int64_t sizes[rank];
   * int64_t strides[rank]; } (strides in elements), 8 + 16 * rank bytes. The
   * kind is written HJ_PARAM_TENSOR | rank << 8 (rank 0 to 8). */
  HJ_PARAM_TENSOR = 6
} hj_param_kind;

/* The rank of a tensor-struct parameter kind. */
static inline uint32_t hj_param_rank(int32_t kind) { return (uint32_t)kind >> 8; }

typedef struct hj_dim3 {
  uint32_t x, y, z;
} hj_dim3;

/* A host-backend kernel: params is packed as cuLaunchKernel's kernelParams
 * (one pointer to each argument value, in declared order). */
typedef void (*hj_host_kernel_fn)(const hj_dim3 *grid, const hj_dim3 *block, uint32_t smem, void **params);

/* A scalar input slot: 8 bytes, the value stored as its declared type. */
typedef union hj_value {
  int64_t i64;
  int32_t i32;
  float f32;
  double f64;
  uint8_t b;
} hj_value;

typedef struct hj_context hj_context;
typedef struct hj_kernel_table hj_kernel_table;

typedef struct hj_options {
  int32_t backend;         /* hj_backend_kind */
  int32_t device;          /* CUDA device ordinal */
  uint64_t memory_limit;   /* bytes the context may hold from the backend; 0 = no limit */
  int32_t reuse_zeroed_memory; /* contract point 5 (unsafe); -1: HOSTJIT_REUSE_ZEROED_MEMORY */
  int32_t check_zeroed;    /* contract point 6; -1: HOSTJIT_CHECK_ZEROED */
  int32_t fill_nan;        /* contract point 6; -1: HOSTJIT_FILL_NAN */
  int32_t record;          /* record every call from the start */
  void *stream;            /* CUDA: a CUstream to use; NULL makes one per context */
  int64_t fail_at;         /* make the N-th fallible operation from creation fail (0: none; -1:
                              HOSTJIT_FAIL_AT); see hj_inject_failure */
  int32_t sync;            /* synchronise after every launch and memset, so a kernel that faults on the
                              device is reported by its own launch (slow: for finding a fault);
                              -1: HOSTJIT_SYNC */
  uint32_t graph_cache;    /* graph mode: signatures kept per context, those seen once
                              (HOSTJIT_GRAPH_PROBATION) evicted first, then the least
                              recently used; 0: HOSTJIT_GRAPH_CACHE, else 1024 */
  int32_t profile;         /* time every runtime call and the device work it queues, for
                              hj_profile_get and hj_trace_write (docs/runtime.md); -1:
                              HOSTJIT_PROFILE */
  double comm_timeout;     /* seconds a rank waits for the others (to join, in a collective) before its
                              communicator is aborted and the call fails; on CUDA a watchdog thread
                              per communicator enforces it (docs/spmd.md). 0: HOSTJIT_COMM_TIMEOUT,
                              else 120, except on CUDA with more than one rank, where neither given
                              means NCCL's blocking calls and no watchdog; negative: no bound (CUDA:
                              NCCL's blocking calls, no watchdog) */
} hj_options;

/* One buffer of a graph-mode memory plan (hj_graph_plan_get). Intermediates
 * live in the plan's block at `offset`, in a slot of `capacity` bytes
 * (zeroed: in the block's zeroed part); outputs are allocated per call and
 * are not in the block (offset and capacity 0). first and last: its
 * allocation and its free among the call's allocations and frees, counted
 * from 0 (last: UINT64_MAX when the call does not free it). */
typedef struct hj_plan_buffer {
  const char *name;
  uint64_t bytes, offset, capacity;
  uint64_t first, last;
  int32_t output, zeroed;
  uint32_t stream;
} hj_plan_buffer;

/* One row of a profile (hj_profile_get): every call of one kind, name and
 * site. Times in microseconds; device times are those of the work the call
 * queued, between timing events on its stream (host backend: the work's
 * wall-clock time), and `timed` counts the calls that had some. A graph
 * launch's device time is the whole graph's. Strings stay valid until the
 * profile is cleared or the context destroyed. */
typedef struct hj_profile_row {
  const char *kind; /* "launch", "matmul", "custom_call", "collective", "alloc", "free", "event",
                       "stream", "sync", "call" (a program call), "graph_build", "graph_update",
                       "graph_launch" */
  const char *name; /* the kernel, the buffer, the collective, the program */
  const char *site; /* the statement ("" when unknown) */
  uint64_t calls, timed;
  double device_us_total, device_us_median, device_us_min, device_us_max;
  double host_us_total, host_us_median;
} hj_profile_row;

/* Describes one kernel of a program for hj_kernel_table_create. Strings are
 * copied; NULL means absent. */
typedef struct hj_kernel_desc {
  const char *name;        /* the program's name for it, for messages */
  const char *host_symbol; /* host backend: registered name or library symbol */
  const char *cuda_source; /* CUDA backend: the source text */
  const char *cuda_path;   /* CUDA backend: the source file, for messages */
  const char *cuda_entry;  /* CUDA backend: extern "C" entry point */
  const char *nvrtc_options; /* CUDA backend: extra NVRTC options, separated by white space */
  uint32_t num_params;
  const int32_t *params;   /* hj_param_kind of each parameter */
  /* CUDA backend, instead of cuda_source: a compiled image (a cubin, a
   * fatbin or PTX text, told apart by their bytes), cuda_path its file, for
   * messages, and cuda_entry the kernel in it. */
  const void *cuda_image;
  uint64_t cuda_image_size;
  /* HJ_LAUNCH_* flags, and the thread-block cluster's dims (0 0 0: no
   * clusters). With clusters, each grid dim of a launch must be a multiple
   * of the cluster's: the grid counts blocks, as in CUDA. */
  uint32_t launch_flags;
  uint32_t cluster[3];
  /* A custom call instead of a kernel, when custom_symbol is not NULL: the
   * hj_custom_call_fn named custom_symbol, among the functions registered
   * with hj_register_custom_call for the context, else in custom_library (a
   * shared library, opened with dlopen when the table is made and closed
   * with the table), else in the libraries of hj_load_custom_library; on
   * every backend. custom_flags: HJ_CUSTOM_*.
   * param_dtypes: the hj_dtype of each ptr and tensor parameter (any value
   * for scalars), handed to the function; NULL: unknown (HJ_DTYPE_COUNT). */
  const char *custom_symbol;
  const char *custom_library;
  uint32_t custom_flags;
  const uint32_t *param_dtypes;
  /* The block the kernel was compiled for (a Triton kernel's 32 x num_warps
   * threads): hj_launch refuses any other. 0 0 0: any block. */
  uint32_t block[3];
} hj_kernel_desc;

/* hj_kernel_desc custom_flags. */
enum {
  HJ_CUSTOM_CAPTURABLE = 1u /* the function only queues work on the stream it is given (no host
                               synchronisation, no allocation), so graph mode may capture it into a
                               CUDA graph; without it a program that calls it runs eagerly in graph mode */
};

/* A custom call's argument, in declared order. */
typedef struct hj_custom_arg {
  int32_t kind;           /* HJ_PARAM_PTR, HJ_PARAM_TENSOR (rank below, not in kind), or a scalar kind */
  uint32_t dtype;         /* ptr and tensor: the element type (hj_dtype) */
  uint32_t rank;          /* tensor: its rank (0 to 8); else 0 */
  void *data;             /* ptr and tensor: the memory (a view's root's, as a launch passes it) */
  const int64_t *sizes;   /* tensor: rank extents; else NULL */
  const int64_t *strides; /* tensor: rank strides, in elements; else NULL */
  hj_value value;         /* scalars: the value, as its kind */
} hj_custom_arg;

/* What a custom call is given. Valid only during the call. */
typedef struct hj_custom_call_args {
  const char *name;      /* the declaration's name (without '@') */
  const char *site;      /* the statement ("call 1 of @main at f.hir:7:3") */
  int32_t backend;       /* hj_backend_kind: HJ_BACKEND_HOST or HJ_BACKEND_CUDA */
  int32_t device;        /* the CUDA device ordinal (0 on the host) */
  void *stream;          /* CUDA: the CUstream to queue the work on, with the device's context current
                            (in graph mode, a stream being captured); host: NULL, do the work now */
  uint32_t num_args;
  const hj_custom_arg *args;
} hj_custom_call_args;

/* A custom call: does its work (CUDA: queues it on call->stream, in stream
 * order with the program's kernels; it must not synchronise the stream, and
 * may not allocate or synchronise at all when it is capturable) and returns
 * 0, or writes a NUL-terminated message of at most error_cap bytes to error
 * and returns non-zero: the call then fails with HJ_ERR_BACKEND, naming the
 * custom call, its statement and the message. It must not throw. */
typedef int32_t (*hj_custom_call_fn)(const hj_custom_call_args *call, char *error, uint64_t error_cap);

/* A communicator's unique id (NCCL's ncclUniqueId on CUDA): made once by
 * one rank with hj_comm_unique_id and handed to every rank (docs/spmd.md). */
typedef struct hj_comm_id {
  unsigned char bytes[128];
} hj_comm_id;

/* The collectives of hj_collective. HJ_COLL_GROUP_BEGIN/END bracket sends
 * and receives that proceed together (NCCL's group calls). */
typedef enum hj_collective_kind {
  HJ_COLL_ALL_REDUCE = 0,
  HJ_COLL_ALL_GATHER = 1,
  HJ_COLL_REDUCE_SCATTER = 2,
  HJ_COLL_BROADCAST = 3,
  HJ_COLL_SEND = 4,
  HJ_COLL_RECV = 5,
  HJ_COLL_GROUP_BEGIN = 6,
  HJ_COLL_GROUP_END = 7
} hj_collective_kind;

typedef enum hj_reduce_op { HJ_REDUCE_SUM = 0, HJ_REDUCE_PROD = 1, HJ_REDUCE_MAX = 2, HJ_REDUCE_MIN = 3 } hj_reduce_op;

/* The runtime's counters (hj_get_stats); stats.def says what each counts. */
typedef struct hj_stats {
#define HJ_STAT(name, meaning) uint64_t name;
#include "hostjit/stats.def"
#undef HJ_STAT
} hj_stats;

typedef enum hj_record_kind {
  HJ_REC_ALLOC = 0,
  HJ_REC_FREE = 1,
  HJ_REC_MEMSET = 2,
  HJ_REC_FILL = 3,
  HJ_REC_LAUNCH = 4,
  HJ_REC_STREAM = 5,       /* hj_set_stream: index is the stream */
  HJ_REC_EVENT_RECORD = 6, /* index is the event */
  HJ_REC_EVENT_WAIT = 7,   /* index is the event */
  HJ_REC_SYNC = 8,         /* hj_stream_sync */
  HJ_REC_USE = 9,          /* hj_record_use: buffer is the buffer id */
  HJ_REC_COLLECTIVE = 10,  /* hj_collective: index is its kind, bytes its bytes, kernel its peer or root */
  HJ_REC_MATMUL = 11,      /* hj_matmul: dims batch m n k, flags HJ_MM_*, dtype A's | C's << 8, args a b c
                              (bias, workspace) as buffers or pointers, bytes the workspace's */
  HJ_REC_CUSTOM_CALL = 12  /* hj_custom_call: name, kernel (its index) and args as a launch's */
} hj_record_kind;

/* One launch argument as recorded: a buffer from this context is named by its
 * buffer id (so records from two contexts compare), anything else by value. */
typedef struct hj_record_arg {
  int32_t kind;      /* hj_param_kind */
  int32_t is_buffer; /* 1: value is a buffer id (pointers and tensor structs) */
  uint64_t value;    /* buffer id, or the argument's bits (a tensor struct's data pointer) */
  uint64_t offset;   /* a buffer id's: bytes past the buffer's start (a view's offset), else 0 */
  const int64_t *dims; /* tensor structs: rank sizes, then rank strides; else NULL */
} hj_record_arg;

typedef struct hj_record_entry {
  int32_t kind;       /* hj_record_kind */
  uint64_t buffer;    /* alloc/free/memset/fill: the buffer id (1, 2, ... since recording began) */
  uint64_t bytes;     /* alloc/memset/fill: bytes */
  uint32_t flags;     /* alloc: HJ_ALLOC_*; */
  uint32_t dtype;     /* alloc: hj_dtype */
  const char *name;   /* buffer name, or kernel name for launches */
  uint32_t kernel;    /* launch: index in its table */
  int64_t dims[7];    /* launch: grid xyz, block xyz, shared bytes */
  uint32_t num_args;
  const hj_record_arg *args;
  uint32_t stream;    /* the stream the call was made on (0: the context's own) */
  uint32_t index;     /* stream and event calls: the stream or event */
  uint32_t launch_flags; /* launch: the kernel's HJ_LAUNCH_* flags */
  uint32_t cluster[3];   /* launch: the kernel's cluster dims (0 0 0: none) */
} hj_record_entry;

/* Graph mode: a kernel argument that the signature key does not fix (a
 * scalar only kernels see), for a replay that does not run the program: the
 * `param`-th argument of the program's `launch`-th launch (0-based, in
 * program order) takes `bits` (the argument's bytes, in the low bytes). */
typedef struct hj_graph_value {
  uint32_t launch;
  uint32_t param;
  uint64_t bits;
} hj_graph_value;

#define HJ_JIT_FN(ret, name, params) ret name params;
#define HJ_API_FN(ret, name, params) ret name params;
#include "hostjit/runtime_abi.def"
#undef HJ_JIT_FN
#undef HJ_API_FN

/* Element size in bytes of an hj_dtype, 0 when out of range. */
static inline uint32_t hj_dtype_size(uint32_t dtype) {
  static const uint8_t bits[] = {
#define HJ_DTYPE(name, ident, code, b, kind) b,
#include "hostjit/dtypes.def"
#undef HJ_DTYPE
  };
  return dtype < HJ_DTYPE_COUNT ? bits[dtype] / 8u : 0u;
}

#ifdef __cplusplus
}
#endif

#endif
