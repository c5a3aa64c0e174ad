import random
import re
from dataclasses import replace
from itertools import product

import numpy as np
import pytest
import torch

from urnlib.languages import logic as L
from urnlib.params import ParameterError

SMALL = {"train": 200, "valid": 40, "easy": 40, "hard": 40, "big": 40, "massive": 16}


@pytest.fixture(scope="module")
def data():
    return L.generate_dataset(counts=SMALL, seed=7)


def test_the_package_exports_its_public_api():
    # the package's modules each hold one idea; everything public is reachable as logic.X
    for name in [*L.__all__, "ALPHABET", "OPERATORS"]:
        assert getattr(L, name) is not None, name
    for module in ("formulas", "semantics", "examples", "splits", "generation", "exam", "stats", "files",
                   "tokens"):
        sub = getattr(L, module)
        assert all(getattr(L, n, getattr(sub, n)) is getattr(sub, n) for n in sub.__all__), module


# ---- an evaluator independent of the module: numpy bool arrays through Python's own eval ----------

def _np_entails(a: str, b: str) -> bool:
    """Brute-force truth table: '>' becomes '<=' (implication on bools), ~ & | are numpy's."""
    names = sorted(set(re.findall("[a-z]", a + b)))
    low, high = names[:16], names[16:]
    rows = np.arange(1 << len(low))
    cols = {v: ((rows >> i) & 1).astype(bool) for i, v in enumerate(low)}
    ca, cb = (compile(f.replace(">", "<="), "<f>", "eval") for f in (a, b))
    for bits in product((False, True), repeat=len(high)):
        env = dict(cols, **{v: np.full(len(rows), x) for v, x in zip(high, bits)})
        ta = np.broadcast_to(eval(ca, {}, env), rows.shape)
        tb = np.broadcast_to(eval(cb, {}, env), rows.shape)
        if (ta & ~tb).any():
            return False
    return True


# ---- formulas -----------------------------------------------------------------------------------

def test_parse_print_round_trip():
    for s in ["a", "~(a)", "(a&(b>~(c)))", "~((p>q))", "(((a|b)>~(~(c)))&z)"]:
        assert L.to_string(L.parse(s)) == s
    assert L.to_string("(a&(b>~c))", style="compact") == "(a&(b>~c))"
    assert L.to_string("(a&(b>~c))") == "(a&(b>~(c)))"
    assert L.parse("~c") == L.parse("~(c)") == L.Not(L.Var("c"))
    # lenient infix: & before |, > last and right-associative
    assert L.to_string("p & q | r > s > t") == "(((p&q)|r)>(s>t))"
    assert L.parse("(a>b)&a") == L.Bin("&", L.Bin(">", L.Var("a"), L.Var("b")), L.Var("a"))
    rnd = random.Random(0)
    for _ in range(200):
        f = L.random_formula(rnd.randint(0, 25), "abcdefg", rnd)
        for style in L.STYLES:
            assert L.parse(L.to_string(f, style)) == f


def test_parse_errors_name_line_and_column():
    with pytest.raises(L.FormulaSyntaxError) as err:
        L.parse("(a&)")
    assert (err.value.line, err.value.column) == (1, 4) and "column 4" in str(err.value)
    with pytest.raises(L.FormulaSyntaxError, match="line 3, column 12"):
        L.parse("(a&b))", line=3, column_offset=6)
    with pytest.raises(L.FormulaSyntaxError, match="single lowercase"):
        L.parse("(A&b)")
    with pytest.raises(L.FormulaSyntaxError, match="closing the"):
        L.parse("(a&(b>c)")
    with pytest.raises(L.FormulaSyntaxError, match="empty"):
        L.parse("  ")


@pytest.mark.parametrize("a, b, expected", [
    ("p & q", "q", True), ("p", "p & q", False), ("a", "a | b", True), ("(a>b)&a", "b", True),
    ("a > b", "b > a", False), ("~~a", "a", True), ("a&~a", "z", True), ("z", "a|~a", True),
    ("a", "b", False), ("~(a|b)", "~a&~b", True),
])
def test_entails_hand_cases(a, b, expected):
    assert L.entails(a, b) is expected
    assert _np_entails(L.to_string(a), L.to_string(b)) is expected


def test_entails_many_variables_exact():
    names = "abcdefghijklmnopqrstu"  # 21 variables: chunked truth table
    conj = names[0]
    for c in names[1:]:
        conj = f"({conj}&{c})"
    assert L.entails(conj, "u") and not L.entails("u", conj)
    assert L.entails(conj, f"(~(u)>{conj})")


def test_counts():
    f = L.parse("(a&(b>~(a)))")
    assert L.variables(f) == ["a", "b"] and L.num_variables(f) == 2
    assert L.num_operators(f) == 3 and L.length(f) == 6  # 3 leaves + 3 operators
    assert L.num_operators("a") == 0 and L.num_operators("~~a") == 2
    assert L.heuristics("(a&b)", "a") == (1, 1, 1)
    assert L.heuristics("a", "(a|~(b))") == (0, 0, 0)
    assert L.heuristics("(a>b)", "(~(a)|b)") == (0, 1, 1)  # longer B; NNF of a>b is ~a|b


def test_alpha_key():
    assert L.alpha_key("(x&y)", "y") == L.alpha_key("(p&q)", "q") == "(a&b),b"
    assert L.alpha_key("(x&y)", "x") != L.alpha_key("(x&y)", "y")


# ---- generation ---------------------------------------------------------------------------------

def test_generated_labels_rechecked_by_independent_truth_table(data):
    for name in ("train", "valid", "easy", "hard", "big", "massive", "exam"):
        for ex in data[name]:
            assert int(_np_entails(ex.premise, ex.hypothesis)) == ex.label, (name, ex)
            assert L.heuristics(ex.premise, ex.hypothesis) == tuple(ex[3:])


def test_splits_balanced_and_sized(data):
    for name, n in SMALL.items():
        assert len(data[name]) == n
        assert sum(ex.label for ex in data[name]) * 2 == n
    assert sum(ex.label for ex in data["exam"]) * 2 == len(data["exam"]) >= 30


def test_quadruple_structure():
    ex = L.generate_split(replace(L.SPLITS["valid"], count=40), seed=3)
    prem = {}
    for e in ex:  # every premise is in one positive and one negative example
        prem.setdefault(e.premise, []).append(e.label)
    assert all(sorted(v) == [0, 1] for v in prem.values())
    hyp = {}
    for e in ex:
        hyp.setdefault(e.hypothesis, []).append(e.label)
    assert all(sorted(v) == [0, 1] for v in hyp.values())


def test_massive_negatives_are_swaps():
    ex = L.generate_split(replace(L.SPLITS["massive"], count=8), seed=1)
    by_premise = {}
    for e in ex:
        by_premise.setdefault(e.premise, {})[e.label] = e.hypothesis
    for d in by_premise.values():
        assert sorted(d[0]) == sorted(d[1]) and d[0] != d[1]  # same symbols, rearranged


def test_determinism_by_seed():
    spec = replace(L.SPLITS["easy"], count=40)
    assert L.generate_split(spec, seed=5) == L.generate_split(spec, seed=5)
    assert L.generate_split(spec, seed=5) != L.generate_split(spec, seed=6)
    a = L.generate_dataset(counts={**SMALL, "massive": 8}, seed=2)
    b = L.generate_dataset(counts={**SMALL, "massive": 8}, seed=2)
    assert a == b


def test_split_characteristics(data):
    st = {k: L.split_statistics(v) for k, v in data.items()}
    assert st["massive"]["mean_vars"] > st["big"]["mean_vars"] > st["easy"]["mean_vars"]
    assert st["massive"]["mean_worlds"] > 100 * st["easy"]["mean_worlds"]
    assert st["big"]["mean_ops"] > st["hard"]["mean_ops"] > 1.5 * st["easy"]["mean_ops"]
    assert st["easy"]["max_ops"] <= 12 and st["big"]["max_ops"] <= 40
    assert st["exam"]["max_vars"] <= 4
    for name in ("train", "valid", "easy"):
        assert st[name]["max_vars"] <= 10


def test_no_test_pair_alpha_equivalent_to_training(data):
    train = {L.alpha_key(e.premise, e.hypothesis) for e in data["train"]}
    for name in ("valid", "easy", "hard", "big", "massive"):
        keys = [L.alpha_key(e.premise, e.hypothesis) for e in data[name]]
        assert not train & set(keys) and len(set(keys)) == len(keys)


def test_heuristic_baselines_near_chance(data):
    for name in ("train", "valid", "easy", "big"):
        for h, acc in L.heuristic_accuracy(data[name]).items():
            assert 0.35 <= acc <= 0.65, (name, h, acc)
    # hard: four-tuples kept only if each heuristic is right on 2 of 4 lines; massive: B and its
    # swapped B' have the same length and variables
    assert L.heuristic_accuracy(data["hard"]) == {"h1": 0.5, "h2": 0.5, "h3": 0.5}
    acc = L.heuristic_accuracy(data["massive"])
    assert acc["h1"] == acc["h2"] == 0.5 and 0.35 <= acc["h3"] <= 0.65
    assert L.surface_features(data["valid"]).shape == (40, len(L.SURFACE_FEATURES))
    for name in ("valid", "easy", "hard"):
        assert 0.3 <= L.surface_baseline(data["train"], data[name]) <= 0.7


def test_exam_labels_by_truth_table():
    for (a, b, e), ex in zip(L.EXAM_PAIRS, L.exam_examples()):
        assert ex.label == e == int(_np_entails(L.to_string(a), L.to_string(b)))


def test_bad_generation_parameters():
    with pytest.raises(ParameterError, match="multiple of 4"):
        L.generate_split(replace(L.SPLITS["easy"], count=42))
    with pytest.raises(ParameterError, match="max_vars"):
        L.generate_split(replace(L.SPLITS["easy"], max_vars=27))
    with pytest.raises(ParameterError, match="max_vars"):
        L.generate_split(replace(L.SPLITS["easy"], min_vars=5, max_vars=3))
    with pytest.raises(ParameterError, match="method"):
        L.generate_split(replace(L.SPLITS["easy"], method="sat"))
    with pytest.raises(ParameterError, match="seed"):
        L.generate_split(L.SPLITS["easy"], seed=1.5)
    with pytest.raises(ParameterError, match="counts key"):
        L.generate_dataset(counts={"test": 4})
    with pytest.raises(ParameterError, match="style"):
        L.to_string("a", style="latex")
    with pytest.raises(ParameterError, match="letters"):
        L.random_formula(3, "aB")
    with pytest.raises(ParameterError, match="variable pools"):
        L.generate_split(replace(L.SPLITS["easy"], count=40), max_groups=1)  # <= 4 four-tuples per pool


# ---- files --------------------------------------------------------------------------------------

def test_file_round_trip(tmp_path, data):
    path = L.write_entailment_file(tmp_path / "sub" / "easy.txt", data["easy"])
    assert L.load_entailment_file(path, check_labels=True) == data["easy"]
    first = path.read_text().splitlines()[0]
    assert re.fullmatch(r"[a-z()~&|>]+,[a-z()~&|>]+,[01],[01],[01],[01]", first)
    # triples get their heuristics computed; format as in Evans et al.'s files
    p2 = L.write_entailment_file(tmp_path / "t.txt", [("(a>b)&a", "b", 1), ("a", "~b", 0)])
    assert p2.read_text() == "((a>b)&a),b,1,1,1,1\na,~(b),0,0,0,0\n"  # H1: len(a) < len(~b)


def test_loader_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="not shipped.*generate_dataset"):
        L.load_entailment_file(tmp_path / "test_hard.txt")
    with pytest.raises(FileNotFoundError, match="test_massive.txt"):
        L.load_original_split(tmp_path, "massive")
    bad = tmp_path / "bad.txt"
    bad.write_text("(a&b),a,1,1,1,1\n(a&b),a,2,1,1,1\n")
    with pytest.raises(L.EntailmentFileError, match=r"bad.txt, line 2: E must be 0 or 1, found '2'"):
        L.load_entailment_file(bad)
    bad.write_text("\n(a&b),a,1,1,1\n")
    with pytest.raises(L.EntailmentFileError, match="line 2: expected 6 comma-separated fields.*found 5"):
        L.load_entailment_file(bad)
    bad.write_text("(a&b),(a|),1,1,1,1\n")
    with pytest.raises(L.EntailmentFileError, match="hypothesis B: line 1, column 10"):
        L.load_entailment_file(bad)
    bad.write_text("(a&b),(a|b),0,1,1,1\n")
    with pytest.raises(L.EntailmentFileError, match="truth table says 1"):
        L.load_entailment_file(bad, check_labels=True)
    good = tmp_path / "validate.txt"
    good.write_text("(x>~(y)),(y>~(x)),1,1,1,1\n")
    assert L.load_original_split(tmp_path, "valid")[0].label == 1


# ---- tokens -------------------------------------------------------------------------------------

def test_vocab_and_encoding():
    assert L.VOCAB[:8] == ("<pad>", "<sep>", "(", ")", "~", "&", "|", ">") and len(L.VOCAB) == 34
    vids = L.variable_ids()
    assert [L.VOCAB[i] for i in vids] == list("abcdefghijklmnopqrstuvwxyz")
    pairs = [("(a&b)", "a", 1), ("~(c)", "(c|~(d))", 0)]
    prem, hyp = L.encode_pairs(pairs)
    assert prem.shape == (2, 5) and hyp.shape == (2, 8) and prem.dtype == torch.long
    assert L.decode(prem[0]) == "(a&b)" and prem[1, 4] == 0 and L.decode(hyp[1]) == "(c|~(d))"
    packed = L.encode_packed(pairs)
    assert packed.shape == (2, 13) and L.decode(packed[1]) == "~(c),(c|~(d))"
    assert (packed[0, 7:] == 0).all() and packed[0, 5] == L.SEP_ID
    assert L.encode_pairs(pairs, max_len=10)[0].shape == (2, 10)
    assert L.encode_labels(pairs).tolist() == [1.0, 0.0]
    with pytest.raises(ParameterError, match="max_len=4"):
        L.encode_packed(pairs, max_len=4)
    with pytest.raises(ParameterError, match="not in VOCAB"):
        L.encode_pairs([("a+b", "a")])
    with pytest.raises(ParameterError, match="empty"):
        L.encode_pairs([])


def test_permutation_is_bijection_and_keeps_labels(data):
    ex = data["train"] + data["hard"]
    packed = L.encode_packed(ex)
    vids = set(L.variable_ids().tolist())
    out = L.permute_variables(packed, generator=torch.Generator().manual_seed(0))
    assert out.shape == packed.shape and out.dtype == torch.long
    nonvar = ~torch.isin(packed, L.variable_ids())
    assert torch.equal(out[nonvar], packed[nonvar])  # brackets, operators, <sep>, padding kept
    changed = 0
    for row_in, row_out, e in zip(packed.tolist(), out.tolist(), ex):
        mapping = {}
        for x, y in zip(row_in, row_out):
            if x in vids:
                assert y in vids and mapping.setdefault(x, y) == y  # a function ...
        assert len(set(mapping.values())) == len(mapping)  # ... and injective
        changed += any(x != y for x, y in mapping.items())
        a, b = L.decode(row_out).split(",")
        assert int(L.entails(a, b)) == e.label  # alpha-equivalence keeps the label
    assert changed > 0.9 * len(ex)


def test_permutation_same_for_premise_and_hypothesis(data):
    ex = data["valid"]
    prem, hyp = L.encode_pairs(ex)
    g = torch.Generator().manual_seed(1)
    p2, h2 = L.permute_variables((prem, hyp), L.variable_ids(), g)
    for i, e in enumerate(ex):
        a, b = L.decode(p2[i]), L.decode(h2[i])
        mapping = dict(zip(e.premise + e.hypothesis, a + b))
        assert L.to_string(e.premise).translate(str.maketrans(mapping)) == a
        assert e.hypothesis.translate(str.maketrans(mapping)) == b
        assert int(L.entails(a, b)) == e.label
    # seeded: reproducible; 1-D input; a full permutation of the 26 letters per row
    again = L.permute_variables((prem, hyp), generator=torch.Generator().manual_seed(1))
    assert torch.equal(again[0], p2) and torch.equal(again[1], h2)
    alphabet = torch.tensor([L.TOKEN_ID[c] for c in "abcdefghijklmnopqrstuvwxyz"])
    perm = L.permute_variables(alphabet, generator=torch.Generator().manual_seed(2))
    assert sorted(perm.tolist()) == alphabet.tolist() and not torch.equal(perm, alphabet)


def test_permutation_is_the_lookup_table_of_the_argsorted_keys():
    # the contract the entailment model's training stream relies on: keys = torch.rand(N, K) from the
    # generator, pi_b = argsort(keys_b), table_b[x_k] = x_{pi_b(k)}, the identity on every other id
    gen = torch.Generator().manual_seed(7)
    ids = torch.tensor([9, 2, 7, 4])  # in no particular order: pi_b permutes positions in this list
    x = torch.randint(0, 12, (50, 13), generator=gen)
    keys = torch.rand(50, 4, generator=torch.Generator().manual_seed(3))
    out = L.permute_variables(x, ids, generator=torch.Generator().manual_seed(3))
    for b in range(50):
        pi = keys[b].argsort().tolist()
        table = {int(ids[k]): int(ids[pi[k]]) for k in range(4)}
        assert sorted(table.values()) == sorted(table)  # a true permutation of the ids
        assert out[b].tolist() == [table.get(w, w) for w in x[b].tolist()]
    # without a generator: torch's global one, exactly N * K uniform draws
    torch.manual_seed(5)
    renamed = L.permute_variables(x, ids)
    after = torch.rand(3)
    torch.manual_seed(5)
    torch.rand(50, 4)  # the keys
    assert torch.equal(torch.rand(3), after)
    assert torch.equal(renamed, L.permute_variables(x, ids, generator=torch.Generator().manual_seed(5)))


def test_permutation_bad_arguments():
    with pytest.raises(ParameterError, match="same number of rows"):
        L.permute_variables((torch.zeros(2, 3, dtype=torch.long), torch.zeros(3, 3, dtype=torch.long)))
    with pytest.raises(ParameterError, match="long"):
        L.permute_variables(torch.zeros(2, 3))
    with pytest.raises(ParameterError, match="distinct"):
        L.permute_variables(torch.zeros(2, 3, dtype=torch.long), variable_ids=[8, 8])
