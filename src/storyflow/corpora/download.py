"""One downloader for every corpus file: streamed to a temporary file, then renamed into place.

A download that fails half-way never leaves a partial file where the workflow would take it for
the real one: the bytes go to a temporary file in the destination's folder, which replaces the
destination (an atomic rename) only once complete. Failures raise one
:class:`~storyflow.errors.StoryflowError` that names the URL, the cause and where to put the
file by hand.
"""

from __future__ import annotations

import http.client
import logging
import shutil
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from storyflow.errors import StoryflowError

log = logging.getLogger(__name__)

#: Seconds to wait for the server before a download counts as failed.
TIMEOUT_S = 30


class DownloadError(StoryflowError):
    """A file could not be fetched; the message says how to get it by hand.

    ``cause``: what failed, in a few words (the HTTP status, the network error).
    """

    def __init__(self, message: str, cause: str) -> None:
        super().__init__(message)
        self.cause = cause


def fetch(
    url: str,
    dest: str | Path,
    *,
    hint: str,
    transform: Callable[[Path, Path], None] | None = None,
    timeout: float = TIMEOUT_S,
) -> Path:
    """Download ``url`` to ``dest`` atomically; returns ``dest``.

    ``transform(downloaded, out)``, when given, turns the downloaded file into the file to keep
    (unzip a member, strip a header); it runs on temporary files too, so ``dest`` appears only
    when everything succeeded. ``hint`` ends the error message (what to do by hand).
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    log.info("downloading %s", url)
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=".download-") as tmp:
        raw = Path(tmp) / "download"
        try:
            request = urllib.request.Request(url, headers={"User-Agent": "storyflow"})
            with (
                urllib.request.urlopen(request, timeout=timeout) as response,
                raw.open("wb") as out,
            ):
                shutil.copyfileobj(response, out)
        except urllib.error.HTTPError as err:
            raise _failed(url, err, hint) from None
        except urllib.error.URLError as err:
            raise _failed(url, err.reason, hint) from None
        except (OSError, http.client.HTTPException, ValueError) as err:
            raise _failed(url, str(err) or type(err).__name__, hint) from None
        log.info("downloaded %.1f MB from %s", raw.stat().st_size / 1e6, url)
        final = raw
        if transform is not None:
            final = Path(tmp) / "final"
            transform(raw, final)
        final.replace(dest)
    return dest


def _failed(url: str, cause: object, hint: str) -> DownloadError:
    return DownloadError(
        f"could not download {url} ({cause}). The machine seems to be offline or the download "
        f"failed. {hint}",
        str(cause),
    )
