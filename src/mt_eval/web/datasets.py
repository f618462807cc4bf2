"""Datasets: the index, and each dataset's counts per segment, difficulty, provenance and register.

Counts only: a dataset page never shows an entry's text, and the secret segments are counts on
every page (``store.pages``).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from fastapi.responses import HTMLResponse

from mt_eval.store.pages import FACETS, dataset_view, datasets
from mt_eval.web.common import not_found, page, store_of

router = APIRouter()
DatasetId = Annotated[str, Path(max_length=200, description="The dataset's id, as its cards give it.")]


def _dataset(request: Request, dataset_id: str) -> list[dict[str, Any]]:
    versions = dataset_view(store_of(request), dataset_id)
    if not versions:
        raise not_found(f"dataset {dataset_id[:80]!r}")
    return versions


@router.get("/datasets", response_class=HTMLResponse, summary="Datasets (page)")
def datasets_page(request: Request) -> HTMLResponse:
    return page(request, "datasets.html", datasets=datasets(store_of(request)), title="Datasets")


@router.get("/datasets/{dataset_id}", response_class=HTMLResponse, summary="Dataset page: counts")
def dataset_page(request: Request, dataset_id: DatasetId) -> HTMLResponse:
    return page(request, "dataset.html", dataset_id=dataset_id, versions=_dataset(request, dataset_id),
                facets=FACETS, title=f"Dataset {dataset_id}")  # fmt: skip


@router.get("/api/datasets", summary="Every dataset in the store")
def datasets_api(request: Request) -> list[dict[str, Any]]:
    return datasets(store_of(request))


@router.get("/api/datasets/{dataset_id}", summary="A dataset's versions and counts (no text)")
def dataset_api(request: Request, dataset_id: DatasetId) -> list[dict[str, Any]]:
    return _dataset(request, dataset_id)
