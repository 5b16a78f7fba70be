# Published genres: passages of books labelled by a manifest (docs/books.md).


if missing_books():

    # Fetching needs the internet, which cluster compute nodes often lack.
    localrules:
        download_books,

    rule download_books:
        output:
            books=missing_books(),
        log:
            plan.corpus.OUT.shared_log("download_books"),
        conda:
            "../../../envs/storyflow.yaml"
        params:
            ids=missing_book_ids(),
            url=book_url,
        script:
            "../../../scripts/download_books.py"


rule sample_passages:
    input:
        manifest=book_manifest,
        books=book_files,
    output:
        stories=fill(plan.corpus.STORIES, corpus="books"),
        sentences=fill(plan.corpus.SENTENCES, corpus="books"),
        counts=fill(plan.corpus.SENTENCE_COUNTS, corpus="books"),
        sample=report(
            fill(plan.corpus.SAMPLE_COUNTS, corpus="books"),
            caption="../../report/book_counts.rst",
            category="Corpus",
            subcategory="books",
        ),
        pov=report(
            fill(plan.corpus.POINT_OF_VIEW, corpus="books"),
            caption="../../report/point_of_view.rst",
            category="Corpus",
            subcategory="books",
        ),
    log:
        fill(plan.corpus.OUT.log("sample_passages"), corpus="books"),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        ids=book_ids(),
        settings=BOOK_PASSAGE_SETTINGS,
        spacy_model=SPACY_MODEL,
    script:
        "../../../scripts/sample_passages.py"
