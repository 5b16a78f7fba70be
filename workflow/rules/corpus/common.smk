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
    if plan.corpus.uses_mirror(config):
        return str(exit_on_config_error(corpora.mirror_file, config, "hippocorpus"))
    return plan.corpus.HIPPOCORPUS_DOWNLOAD


def user_corpus_csv(wildcards):
    return corpus_file(wildcards.corpus)


def user_corpus_columns(wildcards):
    return plan.corpus.user_columns(config, wildcards.corpus)


def sampled_corpus_csv(wildcards):
    return corpus_file(wildcards.corpus)


def story_sample(wildcards):
    return plan.corpus.story_sample(config, wildcards.corpus)


def corpus_contrasts(wildcards):
    return plan.contrasts.contrasts(config, wildcards.corpus)


def book_manifest():
    return corpus_file("books")


# the sampled books (None when off): the manifest is read once, in storyflow.plan.corpus
BOOKS = exit_on_config_error(plan.corpus.selected_books, config)
BOOK_SETTINGS = plan.corpus.book_settings(config)
BOOK_PASSAGE_SETTINGS = plan.corpus.passage_settings(config)
HIPPOCORPUS_SAMPLE = plan.corpus.hippocorpus_sample(config)


def book_files():
    return [] if BOOKS is None else list(BOOKS["source"])


def book_ids():
    return [] if BOOKS is None else list(BOOKS["document_id"])


def missing_books():
    """The books of the sample to download (not in the mirror)."""
    return [] if BOOKS is None else list(BOOKS.source[BOOKS.fetched])


def missing_book_ids():
    return [] if BOOKS is None else list(BOOKS.document_id[BOOKS.fetched])


def book_url(wildcards):
    return BOOK_SETTINGS["url"]


def corpus_groups(corpus):
    """What a corpus's contrasts can name, read before any job: book genres, CSV groups."""
    if corpus == "books":
        return list(BOOKS["genre"])
    columns = plan.corpus.user_columns(config, corpus)
    if columns is not None:
        return exit_on_config_error(group_values, corpus_file(corpus), columns)
    return None


for _corpus in CORPORA:
    exit_on_config_error(
        plan.contrasts.check_contrasts, config, _corpus, corpus_groups(_corpus)
    )
