# Published genres: passages of books labelled by a manifest (docs/books.md).


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
        f"resources/data/books/{g}/{i}.txt"
        for g, i in zip(chosen.genre, chosen.document_id)
    ]
    chosen["source"] = [
        p if Path(p).is_file() else f for p, f in zip(chosen.path, fetched)
    ]
    return chosen


BOOKS = selected_books() if config["books"]["enabled"] else None


def book_files():
    return [] if BOOKS is None else list(BOOKS["source"])


def book_ids():
    return [] if BOOKS is None else list(BOOKS["document_id"])


def missing_books():
    return [source for source in book_files() if source.startswith("resources/")]


def missing_book_ids():
    return [
        i
        for i, source in zip(book_ids(), book_files())
        if source.startswith("resources/")
    ]


def book_path_template(wildcards):
    return config["books"]["path_template"]


def book_url(wildcards):
    return config["books"]["url"]


if missing_books():

    # Fetching needs the internet, which cluster compute nodes often lack.
    localrules:
        download_books,

    rule download_books:
        output:
            books=missing_books(),
        log:
            "logs/books/download_books.log",
        conda:
            "../../envs/storyflow.yaml"
        params:
            ids=missing_book_ids(),
            url=book_url,
        script:
            "../../scripts/download_books.py"


rule sample_passages:
    input:
        manifest=book_manifest(),
        books=book_files(),
    output:
        stories="results/books/stories.parquet",
        sentences="results/books/sentences.parquet",
        counts="results/books/tables/sentence_counts.csv",
        sample=report(
            "results/books/tables/sample_counts.csv",
            caption="../report/book_counts.rst",
            category="Corpus",
            subcategory="books",
        ),
        pov=report(
            "results/books/tables/point_of_view.csv",
            caption="../report/point_of_view.rst",
            category="Corpus",
            subcategory="books",
        ),
    log:
        "logs/books/sample_passages.log",
    conda:
        "../../envs/storyflow.yaml"
    params:
        ids=book_ids(),
        columns=config["books"]["columns"],
        path_template=book_path_template,
        passages=config["books"]["passages"],
        pov=config["books"]["pov"],
        seed=config["books"]["sample"]["seed"],
        spacy_model=config["sentences"]["spacy_model"],
    script:
        "../../scripts/sample_passages.py"
