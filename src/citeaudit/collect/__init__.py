"""Collect answers for a question protocol from the engines' HTTP APIs, with the user's own keys."""

from citeaudit.collect.engines import ENGINES, Engine, Request, split_locale
from citeaudit.collect.plan import CollectionPlan, EngineSpec, Task, load_plan, plan_from_document
from citeaudit.collect.runner import CollectReport, CollectSettings, collect, missing_keys

__all__ = [
    "ENGINES",
    "CollectReport",
    "CollectSettings",
    "CollectionPlan",
    "Engine",
    "EngineSpec",
    "Request",
    "Task",
    "collect",
    "load_plan",
    "missing_keys",
    "plan_from_document",
    "split_locale",
]
