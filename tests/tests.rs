//! One integration-test binary, a module per area (see tests/util.rs for helpers).

mod util;

mod bad_models;
mod browser;
mod cli;
mod cli_errors;
mod constrain;
mod converse;
mod embed;
mod engine;
mod eval;
mod experiment;
mod faults;
mod fuzz_world;
mod garbage;
mod ha_dashboard;
mod interview;
mod layers;
mod memory;
mod model_store;
mod qwen2;
mod remote;
mod remote_constrain;
mod remote_faults;
mod sim;
mod synthetic_arch;
mod tensor_backend;
mod tokenizer;
mod viewer;
mod world;
mod world_import;
