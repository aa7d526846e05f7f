from tokenizers_app.bpe.corpus_stats import CorpusStats


def summary(*blocks) -> dict:
    stats = CorpusStats()
    for block in blocks:
        stats.add(block)
    return stats.summary()


def test_lines_characters_and_scripts_of_a_text_seen_in_blocks():
    assert summary("ab\nж", "ж\n") == {"line_count": 2, "char_count": 6,
                                         "scripts": {"Latin": 0.5, "Cyrillic": 0.5}}


def test_a_last_line_without_a_newline_counts_and_only_letters_are_counted():
    # 8 Greek, 3 Latin, 2 Han letters and one Hebrew letter (its combining dot is no letter)
    assert summary("日本 and ελ", "ληνικά\nשׁ") == {
        "line_count": 2, "char_count": len("日本 and ελληνικά\nשׁ"),
        "scripts": {"Greek": round(8 / 14, 4), "Latin": round(3 / 14, 4),
                    "Han": round(2 / 14, 4), "Hebrew": round(1 / 14, 4)}}


def test_letters_of_no_listed_script_are_other():
    assert summary("ab ჯჯ")["scripts"] == {"Latin": 0.5, "other": 0.5}


def test_summary_can_be_read_twice():
    stats = CorpusStats()
    stats.add("abc")
    assert stats.summary() == stats.summary()
