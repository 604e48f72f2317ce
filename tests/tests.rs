//! One integration-test binary, a module per area (see tests/util.rs for helpers).

mod util;

mod browser;
mod cli;
mod constrain;
mod embed;
mod engine;
mod memory;
mod model_store;
mod sim;
mod tensor_backend;
mod tokenizer;
mod viewer;
mod world;
