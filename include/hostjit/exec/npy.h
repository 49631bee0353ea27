// npy.h - NumPy .npy files in and out: how data from PyTorch or NumPy
// reaches a program (hostjit run --input x=@x.npy) and how its outputs get
// back (--save-outputs), for numpy.load to compare.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hostjit/exec/runtime_handles.h"
#include "hostjit/ir/error.h"
#include "hostjit/ir/types.h"

namespace hostjit {

// An array as a .npy file holds it: a dtype, a shape, and the elements in
// row-major (C) order, dtypeBytes(dtype) bytes each, little-endian.
struct NpyArray {
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  std::vector<unsigned char> data;
};

// Reads a .npy file (format versions 1.0 to 3.0). Errors name the file and
// say what is wrong: not a .npy file, a big-endian or Fortran-order array, a
// dtype hostjit has no type for (it reads f16, f32, f64, i8, i16, i32, i64,
// u8, u32, u64 and bool), a shape of more than 8 dims, data shorter than the
// shape says.
Expected<NpyArray> readNpy(const std::string &path);

// Writes a .npy file (format 1.0, C order). bf16 has no NumPy dtype: an
// error, as is a file that cannot be written; errors name the file.
Expected<void> writeNpy(const std::string &path, const NpyArray &a);

// A tensor's elements in row-major order (gathered through its strides, so
// views and expanded dims come out as NumPy would show them).
Expected<NpyArray> toNpy(const Tensor &t);

}  // namespace hostjit
