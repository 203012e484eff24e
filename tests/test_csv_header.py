"""The first CSV line is a header only when it holds names: a first sample with a mistyped
number (``1e``, ``0x1``, ``1.2.3``) is refused, not silently dropped as a header."""

import numpy as np
import pytest

from approxpath.cli import main
from approxpath.data import load_data
from approxpath.errors import InputError

ROWS = "0.3,0.1,-1\n0.5,0.6,1\n0.2,0.3,-1\n"


@pytest.mark.parametrize("column,cell", [(1, "1e"), (1, "0x1"), (1, "1.2.3"), (2, "-1.."), (2, ".5."), (3, "+.")])
def test_a_mistyped_number_on_line_1_is_refused_not_taken_as_a_header(tmp_path, column, cell):
    row = ["0.1", "0.2", "1"]
    row[column - 1] = cell
    f = tmp_path / "typo.csv"
    f.write_text(",".join(row) + "\n" + ROWS)
    with pytest.raises(InputError) as err:
        load_data(f, "csv")
    msg = str(err.value)
    assert "\n" not in msg
    assert f"{str(f)!r}, line 1, column {column}: {cell!r} is not a number" in msg
    assert "a header line holds names" in msg


def test_the_line_named_is_the_first_non_blank_one(tmp_path):
    f = tmp_path / "typo.csv"
    f.write_text("\n\n1e,0.2,1\n" + ROWS)
    with pytest.raises(InputError, match=r"line 3, column 1: '1e' is not a number"):
        load_data(f, "csv")


def test_a_byte_order_mark_before_a_typo_is_not_part_of_the_cell(tmp_path):
    f = tmp_path / "typo.csv"
    f.write_bytes(b"\xef\xbb\xbf" + ("1e,0.2,1\n" + ROWS).encode())
    with pytest.raises(InputError, match=r"column 1: '1e' is not a number"):
        load_data(f, "csv")


@pytest.mark.parametrize("header", ["x1,x2,y", "0,1,y", "feature 1, feature 2 ,label", '"x","",y', "x,,y",
                                    "nan_count,x,y", "-,.x,y"])
def test_a_header_of_names_is_still_skipped(tmp_path, header):
    f = tmp_path / "h.csv"
    f.write_text(header + "\n" + ROWS)
    X, y = load_data(f, "csv")
    np.testing.assert_array_equal(X, [[0.3, 0.1], [0.5, 0.6], [0.2, 0.3]])
    np.testing.assert_array_equal(y, [-1, 1, -1])


def test_a_numeric_first_line_is_still_data(tmp_path):
    f = tmp_path / "d.csv"
    f.write_text(" 0.1 , 2e-1,1\n" + ROWS)
    X, y = load_data(f, "csv")
    assert X.shape == (4, 2) and y[0] == 1


@pytest.mark.parametrize("cell", ["nan", "NaN", "-inf", "Infinity"])
def test_a_non_finite_first_row_keeps_its_refusal(tmp_path, cell):
    f = tmp_path / "d.csv"
    f.write_text(f"{cell},0.2,1\n" + ROWS)
    with pytest.raises(InputError, match=r"line 1: a cell is NaN or inf .*; clean or impute the data first"):
        load_data(f, "csv")


@pytest.mark.parametrize("header", ["", "x1,x2,y\n"])
def test_a_typo_further_down_keeps_its_error(tmp_path, header):
    f = tmp_path / "d.csv"
    f.write_text(header + "0.1,0.2,1\n0.3,0.1,-1\n0.5,1e,1\n")
    line = 3 + bool(header)
    with pytest.raises(InputError, match=rf"line {line}: a cell is not a number \('0.5,1e,1'\); a CSV file needs "
                                         r"numbers only"):
        load_data(f, "csv")


def test_cli_refuses_the_typo_with_one_line_and_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "typo.csv").write_text("1e,0.2,1\n" + ROWS)
    assert main(["path", "kernel_svm", "--data", "typo.csv", "--eps", "0.5", "--range", "1", "4"]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert "\n" not in err
    assert "'typo.csv', line 1, column 1: '1e' is not a number (a header line holds names, not numbers)" in err


@pytest.mark.parametrize("first", ["1,NA,1", "0.1,-,1", "0.1,0.2,", "?,0.2,1", "0.1,n/a,1", '0.1,"",1'])
def test_a_first_sample_with_a_gap_is_refused_not_dropped_as_a_header(tmp_path, first):
    """``1,NA`` was taken for a header of numeric and 'NA' names: the first sample was dropped
    silently, and the certificate (verify reads the same way) was of the other samples."""
    f = tmp_path / "gap.csv"
    f.write_text(first + "\n" + ROWS)
    with pytest.raises(InputError, match=r"line 1: a cell is not a number .*; a CSV file needs numbers only"):
        load_data(f, "csv")


@pytest.mark.parametrize("header, names", [("a,b,c,d", 4), ("x,y", 2), ("0,1,2,y", 4)])
def test_a_header_of_another_width_than_the_rows_is_refused(tmp_path, header, names):
    f = tmp_path / "h.csv"
    f.write_text("\n" + header + "\n\n" + ROWS)
    with pytest.raises(InputError, match=rf"line 2: a header of {names} names over rows of 3 cells \(line 4\); give "
                                         "every column one name, or drop the header line"):
        load_data(f, "csv")


def test_a_header_only_file_is_one_line(tmp_path, capsys, monkeypatch):
    """numpy's "input contained no data" warning came before the error line."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "h.csv").write_text("x,y\n\n \n")
    assert main(["path", "klasso", "--data", "h.csv", "--lam", "0.1", "--range", "1", "2"]) == 2
    assert capsys.readouterr().err.strip() == "approxpath: error: 'h.csv' holds no samples (a header only)"


@pytest.mark.parametrize("first", ["1,missing,1", "1,2,yes", '"1",2,1', "x,2,y", "0,2,y"])
def test_names_beside_numbers_on_line_1_are_refused_not_dropped(tmp_path, first):
    """``1,missing,1`` (a sample with a gap written as a word) was taken as a header and the
    sample dropped, silently; pandas' ``0,1,y`` (numbers at their columns' positions) stays a
    header (above)."""
    f = tmp_path / "mixed.csv"
    f.write_text(first + "\n" + ROWS)
    with pytest.raises(InputError, match=r"line 1: numbers and names on the first line .*a header line holds names "
                                         r"only") as err:
        load_data(f, "csv")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("text, line", [(ROWS + "0.4,0.4,1 # checked\n", 4), ("0.1,0.2,-1#,9\n" + ROWS, 1)])
def test_a_hash_inside_a_line_is_refused_naming_its_line(tmp_path, text, line):
    """numpy's reader dropped the cells after a '#' typo (``-1#,9`` read as ``-1``)."""
    f = tmp_path / "c.csv"
    f.write_text(text)
    with pytest.raises(InputError, match=rf"line {line}: a '#' inside a line .*a comment takes a line of its own"):
        load_data(f, "csv")


def test_comment_lines_are_skipped_and_savetxt_headers_read(tmp_path):
    """``np.savetxt(..., header="x1,x2,y")`` writes ``# x1,x2,y``: a comment, as numpy reads it."""
    f = tmp_path / "c.csv"
    data = np.array([[0.3, 0.1, -1], [0.5, 0.6, 1], [0.2, 0.3, -1]])
    np.savetxt(f, data, delimiter=",", header="x1,x2,y")
    assert f.read_text().startswith("# x1,x2,y\n")
    X, y = load_data(f, "csv")
    np.testing.assert_array_equal(np.column_stack([X, y]), data)
    f.write_text("\ufeff# made by hand\n" + ROWS + "  # a note\n" + ROWS)
    assert load_data(f, "csv")[0].shape == (6, 2)
