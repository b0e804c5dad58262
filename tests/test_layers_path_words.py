"""Path words of the role taxonomy that read as another role's in other projects: a credential
module ("api_token.py" of a serving framework's cloud client) is no tokenization."""

from __future__ import annotations

import pytest

from extractor.layers import load_taxonomy
from extractor.layers.scoring import signal_index


def _roles_of_path_word(word: str) -> list[str]:
    index = signal_index(load_taxonomy())
    numbers = set(index.matching("path", word))
    return sorted({role.id for role, signals, _ in index.roles for _s, n in signals if n in numbers})


@pytest.mark.parametrize("word", ["api_token", "access_tokens", "auth_token", "bearer_token", "jwt_token"])
def test_a_credential_token_is_no_tokenization(word):
    assert "tokenization" not in _roles_of_path_word(word)


@pytest.mark.parametrize("word", ["tokens", "token_utils", "special_tokens", "detokenizer", "tokenizer_group"])
def test_text_tokens_stay_tokenization(word):
    assert "tokenization" in _roles_of_path_word(word)


def test_a_hugging_face_configuration_module_in_a_models_tree_is_configuration(tmp_path):
    # flash-linear-attention's (and transformers' own) shape: models/<name>/configuration_<name>.py
    from tests.native_support import written_bundle

    bundle = written_bundle(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/models/__init__.py": "",
        "pkg/models/gla/__init__.py": "",
        "pkg/models/gla/configuration_gla.py": '''
            from transformers.configuration_utils import PretrainedConfig


            class GLAConfig(PretrainedConfig):
                model_type = "gla"

                def __init__(self, hidden_size=2048, **kwargs):
                    self.hidden_size = hidden_size
                    super().__init__(**kwargs)
        ''',
    })
    roles = {m["module"]: m["role"] for layer in bundle["layers"] for m in layer["modules"]}
    assert roles["py:pkg.models.gla.configuration_gla"] == "configuration"
    assert "configuration" in _roles_of_path_word("configuration_gla")


# sentencepiece's C++ core (src/bpe_model.cc, unigram_model.cc, ...) had no signal of any role
@pytest.mark.parametrize("word", ["bpe_model", "bpe_model_trainer", "byte_bpe", "unigram_model", "wordpiece",
                                  "word_piece_trainer", "sentencepiece_processor", "sentence_piece"])
def test_subword_algorithms_are_tokenization(word):
    assert "tokenization" in _roles_of_path_word(word)


# TensorFlow Serving's thread_pool_factory.cc, fixed_thread_pool.h, threadpool_executor.cc and
# tflite_interpreter_pool.cc were memory management on the word "pool"
@pytest.mark.parametrize("word", ["thread_pool_factory", "fixed_thread_pool", "threadpool_executor",
                                  "tflite_interpreter_pool", "worker_pool", "process_pool_executor", "connection_pool"])
def test_a_pool_of_threads_workers_or_connections_is_no_memory(word):
    assert "memory" not in _roles_of_path_word(word)


@pytest.mark.parametrize("word", ["block_pool", "kv_pool", "mem_pool", "pool_allocator", "token_to_kv_pool"])
def test_a_pool_of_memory_stays_memory(word):
    assert "memory" in _roles_of_path_word(word)
