//! The error type of the embedder: every message names the file at fault (or the input) and
//! says what was expected.

use std::path::PathBuf;

use crate::model_store::ModelStoreError;

/// Result alias of the embedder.
pub type Result<T> = std::result::Result<T, EmbedError>;

/// Everything that can go wrong while loading a sentence-embedding model or running it.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// A file the model folder must hold is not there.
    #[error(
        "missing {}: a sentence-embedding model folder holds model.safetensors, config.json and \
         tokenizer.json",
        path.display()
    )]
    MissingFile {
        /// The expected file.
        path: PathBuf,
    },

    /// A file exists but could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },

    /// `config.json` is not JSON or not a BERT configuration.
    #[error("{}: not a BERT config.json: {source}", path.display())]
    Config {
        /// The config file.
        path: PathBuf,
        /// The JSON error (names the field).
        source: serde_json::Error,
    },

    /// The model's configuration is valid JSON but unusable (e.g. too few positions).
    #[error("{}: {message}", path.display())]
    Unsupported {
        /// The file at fault.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },

    /// `tokenizer.json` could not be loaded or configured.
    #[error("{}: cannot load the tokenizer: {source}", path.display())]
    Tokenizer {
        /// The tokenizer file.
        path: PathBuf,
        /// The tokenizers error.
        source: tokenizers::Error,
    },

    /// The weights are not a valid safetensors file or lack tensors the BERT config needs.
    #[error("{}: cannot load BERT weights: {source}", path.display())]
    Weights {
        /// The weights file.
        path: PathBuf,
        /// The candle error (names the tensor or the format problem).
        source: candle_core::Error,
    },

    /// Tokenising an input text failed.
    #[error("cannot tokenize text {text:?}: {source}")]
    Tokenize {
        /// The start of the text (at most 80 characters).
        text: String,
        /// The tokenizers error.
        source: tokenizers::Error,
    },

    /// The forward pass failed.
    #[error("embedding forward pass failed: {0}")]
    Forward(#[from] candle_core::Error),

    /// The model could not be resolved through the model store.
    #[error(transparent)]
    ModelStore(Box<ModelStoreError>),
}

impl From<ModelStoreError> for EmbedError {
    fn from(e: ModelStoreError) -> EmbedError {
        EmbedError::ModelStore(Box::new(e))
    }
}
