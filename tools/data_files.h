// data_files.h - real data in and out of `hostjit run`: --input NAME=@FILE.npy,
// --save-inputs DIR and --save-outputs DIR (NumPy .npy files, hostjit/exec/npy.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "hostjit/exec/host_data.h"
#include "hostjit/exec/npy.h"
#include "hostjit/exec/plan.h"
#include "hostjit/ir/ir.h"

namespace hostjit::cli {

// Reads the file given for each input (name -> path); checks each against
// the input's declared type (dtype, rank, static dims), with errors that name
// the option, the file and what was expected; on success sets shapes[name]
// and returns the bytes by name (for InputSet::random's `given`).
Expected<std::map<std::string, std::vector<unsigned char>>> loadInputFiles(
    const Plan &plan, const std::map<std::string, std::string> &files,
    std::map<std::string, std::vector<int64_t>> *shapes);

// Writes each tensor input as DIR/NAME.npy (creating DIR).
Expected<void> saveInputs(const std::string &dir, const Plan &plan, const InputSet &inputs);

// The names the outputs are saved under: each returned value's name (a
// fusion's output names), made unique with _1, _2, ... when one repeats.
std::vector<std::string> outputNames(const Program &p);

// Writes outputs[i] as DIR/names[i].npy (creating DIR).
Expected<void> saveOutputs(const std::string &dir, const std::vector<std::string> &names,
                           const std::vector<Tensor> &outputs);

}  // namespace hostjit::cli
