# Corpus: the config lookups and input functions of its rules (the other files of
# workflow/rules/corpus/), kept apart from the rules as Snakemake's linter asks; file names come
# from storyflow.plan.corpus.
from storyflow import corpora
from storyflow.corpora.user_csv import group_values, left_out


def corpus_file(name):
    """Corpus ``name``'s file as configured (inside data.mirror unless absolute)."""
    return str(corpora.configured_path(config, name))


def require_data(*corpora_read):
    """Stop the run, naming what to put where, when a corpus of ``corpora_read`` lacks its file
    (storyflow.plan.corpus.missing_data); the message names every other corpus of the config
    that lacks one too. Called from the input functions of the rules that read corpus files,
    so that only a run that plans those jobs needs the data (not --lint, --list-rules, or a
    dry run of other targets)."""
    problem = plan.corpus.data_problem(config, corpora_read, READ_CORPORA, BOOKS)
    if problem is not None:
        logger.error(f"storyflow: {problem}")
        sys.exit(1)


def data_checked(wildcards):
    """Rule all's check of every corpus the config reads, before any job: [] (no file)."""
    require_data(*READ_CORPORA)
    return []


def hippocorpus_csv(wildcards=None):
    """The corpus CSV: the mirror's copy when a mirror is set (it must be there), else the
    download rule's output."""
    require_data("hippocorpus")
    if plan.corpus.uses_mirror(config):
        return corpus_file("hippocorpus")
    return plan.corpus.HIPPOCORPUS_DOWNLOAD


def user_corpus_csv(wildcards):
    require_data(wildcards.corpus)
    return corpus_file(wildcards.corpus)


def corpus_label(wildcards):
    """The grouping label's column in the corpus's CSV tables: group for a CSV corpus."""
    return corpora.label_column(config, wildcards.corpus)


def user_corpus_columns(wildcards):
    return plan.corpus.user_columns(config, wildcards.corpus)


def sampled_corpus_csv(wildcards):
    require_data(wildcards.corpus)
    return corpus_file(wildcards.corpus)


def story_sample(wildcards):
    return plan.corpus.story_sample(config, wildcards.corpus)


def corpus_contrasts(wildcards):
    return plan.contrasts.contrasts(config, wildcards.corpus)


def book_manifest(wildcards):
    require_data("books")
    return corpus_file("books")


# the sampled books (None when off, or when the manifest is not there: require_data says so when
# a job that reads the books is planned): the manifest is read once, in storyflow.plan.corpus
BOOKS = exit_on_config_error(plan.corpus.selected_books, config)
# every corpus whose file the run reads (rule all checks them before any job)
READ_CORPORA = exit_on_config_error(plan.read_corpora, config)
BOOK_SETTINGS = plan.corpus.book_settings(config)
BOOK_PASSAGE_SETTINGS = plan.corpus.passage_settings(config)
HIPPOCORPUS_SAMPLE = plan.corpus.hippocorpus_sample(config)


def book_files(wildcards):
    require_data("books")
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
        return exit_on_config_error(group_values, corpus_file(corpus), columns, corpus)
    return None


def groups_known(corpus):
    """Whether the data that says what ``corpus``'s contrasts can name is there (the books'
    manifest, a CSV corpus's file); when it is not, require_data stops a run that reads it.
    """
    if corpus == "books":
        return BOOKS is not None
    return corpus not in USER_CORPORA or Path(corpus_file(corpus)).is_file()


for _corpus in filter(groups_known, CORPORA):
    exit_on_config_error(
        plan.contrasts.check_contrasts, config, _corpus, corpus_groups(_corpus)
    )
# Each story of a corpus of the user's that the run will leave out (an empty text, no group),
# said before any job (storyflow.corpora.user_csv.left_out).
for _corpus in USER_CORPORA:
    for _line in exit_on_config_error(
        left_out,
        corpus_file(_corpus),
        plan.corpus.user_columns(config, _corpus),
        _corpus,
    ):
        logger.warning(f"storyflow: {_line}")
