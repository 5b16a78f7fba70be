# Published genres: passages of books labelled by a manifest (docs/books.md).


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
        stories=CORPUS_OUT.of("books", "stories.parquet"),
        sentences=CORPUS_OUT.of("books", "sentences.parquet"),
        counts=CORPUS_OUT.of("books", "tables/sentence_counts.csv"),
        sample=report(
            CORPUS_OUT.of("books", "tables/sample_counts.csv"),
            caption="../report/book_counts.rst",
            category="Corpus",
            subcategory="books",
        ),
        pov=report(
            CORPUS_OUT.of("books", "tables/point_of_view.csv"),
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
