#pragma once
// Where models come from, for both front ends: a builtin spec ("transformer:seq=128") or, with
// the ONNX importer, a .onnx file. Also the seeded inputs a run uses when none are given.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/models/onnx_import.h"

namespace fusebox::workbench {

// Whether `model` names a file to import (".onnx") rather than a builtin spec.
bool is_model_file(const std::string& model);

// The dims of a .onnx file's inputs as the `dims` setting names them: a dim's dim_param ("seq"),
// otherwise "<input>:<index>" ("x:0"). Read without importing; throws fusebox::Error naming the
// file when it cannot be read.
struct OnnxDim {
  std::string name;      // the key in `dims`
  std::string input;     // the input it belongs to
  size_t index = 0;      // its axis
  std::string declared;  // as the file declares it: "1", "seq", "?"
  bool dynamic = false;  // not a number in the file: it needs (or may take) a value
};
std::vector<OnnxDim> onnx_dims(const std::string& path);
// The same, from a file already inspected.
std::vector<OnnxDim> onnx_dims(const models::OnnxInspection& inspection);
// Whether a dim as the file declares it is a number ("1"), not a name ("seq") or nothing ("?").
bool fixed_dim(const std::string& declared);

// Throws fusebox::Error naming the model and what is wrong. A model ending in ".onnx" is imported
// (core/models/onnx_import.h) with `dims` giving values to its dynamic dims (the `dims` setting),
// and each .npy file of `inputs` (input name -> file, the `inputs` setting) binding the dynamic
// dims of its input to the sizes its header declares, as ONNX Runtime takes a shape from the
// tensor it is given (bind_input_dims).
// Messages name the setting (`dims`, `inputs.x`), not a flag: the value may have come from a
// JSON file or the window.
// `consts` (input name -> a .npy file or a number, the `consts` setting) makes those inputs
// constants of the graph before the passes (constant_inputs).
ir::Graph load_model(const std::string& model, uint64_t seed,
                     const std::map<std::string, int64_t>& dims = {},
                     const std::map<std::string, std::string>& inputs = {},
                     const std::map<std::string, std::string>& consts = {});

// The values `consts` gives the inputs `info` of the .onnx model at `path`: a .npy file as read
// (its dtype and rank the input's, its fixed dims equal), or a number filling an input whose dims
// are all fixed. An input that is not the model's, is also fed from a file (`inputs`), or that the
// value does not fit, is refused naming `consts.NAME`. For OnnxImportOptions::constant_inputs.
std::map<std::string, ir::Tensor> constant_inputs(const std::string& path,
                                                  const std::vector<models::OnnxValueInfo>& info,
                                                  const std::map<std::string, std::string>& consts,
                                                  const std::map<std::string, std::string>& inputs = {});

// `dims` with the dynamic dims of `model_dims` that the files of `inputs` fix. A dim fixed twice
// to different sizes, by two files or by a file and `dims`, is refused naming both; so is a file
// whose rank is not its input's.
std::map<std::string, int64_t> bind_input_dims(const std::vector<OnnxDim>& model_dims,
                                               std::map<std::string, int64_t> dims,
                                               const std::map<std::string, std::string>& inputs);

// Seeded inputs for every graph input: f32 uniform in [-1, 1); i64 uniform in [0, 16).
std::vector<ir::Tensor> random_inputs(const ir::Graph& graph, uint64_t seed);

// The inputs of a run: seeded random, replaced by the .npy files in `files` (input name -> file),
// whose names, dtypes and shapes are checked against the graph (errors name the input and file).
std::vector<ir::Tensor> load_inputs(const ir::Graph& graph, uint64_t seed,
                                    const std::map<std::string, std::string>& files);

}  // namespace fusebox::workbench
