# Corpus: the config lookups and input functions of its rules (the other files of
# workflow/rules/corpus/), kept apart from the rules as Snakemake's linter asks; file names come
# from storyflow.plan.corpus.
from storyflow import corpora
from storyflow.corpora.user_csv import group_values


def corpus_file(name):
    """Corpus ``name``'s file as configured (inside data.mirror unless absolute)."""
    return str(corpora.configured_path(config, name))


def hippocorpus_csv():
    """The corpus CSV: the mirror's copy when a mirror is set (it must be there), else the
    download rule's output."""
    if config["data"]["mirror"]:
        return str(exit_on_config_error(corpora.mirror_file, config, "hippocorpus"))
    return plan.corpus.HIPPOCORPUS_DOWNLOAD


def user_corpus_csv(wildcards):
    return corpus_file(wildcards.corpus)


def user_corpus_columns(wildcards):
    return config["corpora"][wildcards.corpus]["columns"]


def sampled_corpus_csv(wildcards):
    return corpus_file(wildcards.corpus)


def story_sample(wildcards):
    return config["stories"][wildcards.corpus]


def corpus_contrasts(wildcards):
    return plan.contrasts.contrasts(config, wildcards.corpus)


def book_manifest():
    return corpus_file("books")


def selected_books():
    """The sampled manifest rows, each with ``source``: its file in the mirror or resources/."""
    from storyflow.corpora.books import read_manifest, select_books

    books, columns = config["books"], config["books"]["columns"]
    manifest = read_manifest(
        book_manifest(),
        id_column=columns["id"],
        genre_column=columns["genre"],
        path_column=columns["path"],
        path_template=books["path_template"],
    )
    sample = books["sample"]
    chosen = select_books(manifest, sample["per_genre"], sample["seed"])
    fetched = [
        plan.corpus.book_download(g, i)
        for g, i in zip(chosen.genre, chosen.document_id)
    ]
    chosen["fetched"] = [not Path(p).is_file() for p in chosen.path]
    chosen["source"] = [
        f if missing else p
        for p, f, missing in zip(chosen.path, fetched, chosen.fetched)
    ]
    absent = list(chosen.path[chosen.fetched])
    if config["data"]["mirror"] and absent:
        raise StoryflowError(
            f"{len(absent)} book(s) of the sample are not in the data mirror "
            f"({config['data']['mirror']}); looked for: {', '.join(absent[:5])}"
            + (f" and {len(absent) - 5} more" if len(absent) > 5 else "")
            + ". Fix data.mirror, add the files, or set data.mirror to null to download them."
        )
    return chosen


BOOKS = exit_on_config_error(selected_books) if config["books"]["enabled"] else None


def book_files():
    return [] if BOOKS is None else list(BOOKS["source"])


def book_ids():
    return [] if BOOKS is None else list(BOOKS["document_id"])


def missing_books():
    """The books of the sample to download (not in the mirror)."""
    return [] if BOOKS is None else list(BOOKS.source[BOOKS.fetched])


def missing_book_ids():
    return [] if BOOKS is None else list(BOOKS.document_id[BOOKS.fetched])


def book_path_template(wildcards):
    return config["books"]["path_template"]


def book_url(wildcards):
    return config["books"]["url"]


def corpus_groups(corpus):
    """What a corpus's contrasts can name, read before any job: book genres, CSV groups."""
    if corpus == "books":
        return list(BOOKS["genre"])
    if corpus in config["corpora"]:
        return exit_on_config_error(
            group_values, corpus_file(corpus), config["corpora"][corpus]["columns"]
        )
    return None


for _corpus in CORPORA:
    exit_on_config_error(
        plan.contrasts.check_contrasts, config, _corpus, corpus_groups(_corpus)
    )
