"""DreamBench++ with ratings only (human groups + GPT judge JSONs, no images): imported as ratings-only
samples, judge-vs-human agreement measured from the database; then the images imported later complete
the same samples (nothing duplicated). Tasks never offer ratings-only samples; batch scoring skips them.
SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

from dataset_trees import write_dreambench

from masc_ui.analysis import HUMANS, agreement_table
from masc_ui.datasets import read_layout
from masc_ui.datasets.agreement_source import load_agreement_data
from masc_ui.models.loaded_models import ModelRegistry
from masc_ui.workbench import build_workbench
from masc_ui.workbench.batch import BatchOptions
from masc_ui.workbench.ingest import ingest
from storage import open_store


def _import(store, root: Path, judge: str = "gpt4o"):
    return ingest(store, "dbpp", "dreambench", read_layout("dreambench", root, judge=judge))


def test_ratings_only_then_images(database_url, tmp_path, demo_settings):
    ratings = write_dreambench(tmp_path / "ratings", images=False, samples=False)
    images = write_dreambench(tmp_path / "images", human=False, gpt=False)
    with open_store(database_url, tmp_path / "data") as store:
        first = _import(store, ratings)
        assert first.problems == []
        assert (first.added_samples, first.ratings_only_samples, first.added_ratings, first.added_metrics) == (
            12,
            12,
            48,
            24,
        )
        before = {s.external_key: s for s in store.samples.list("dbpp")}
        assert all(s.ratings_only for s in before.values())
        s = before["dreambooth_sd/object_03_red_backpack-1"]
        assert (s.subject, s.category, s.method, s.prompt) == (
            "Red Backpack",
            "object",
            "dreambooth_sd",
            "a red backpack in scene 1",
        )

        data = load_agreement_data(store, "dbpp")
        table = agreement_table(data, None, "cp", n_boot=0)
        judge = table.row("gpt4o_cp")
        assert judge.n == 12 and judge.n_raters == 2 and judge.alpha.value == judge.alpha.value  # not NaN
        assert table.row(HUMANS).n == 12 and table.row("gpt4o_pf").n == 12

        # raters are never handed a sample without images; batch scoring skips them, not as failures
        store.ratings.ensure_rater("alice")
        assert store.tasks.next_task("alice", "dbpp") is None
        assert store.tasks.progress("alice", "dbpp") == (0, 0, 0)
        models = ModelRegistry()
        summary = build_workbench(demo_settings, store=store, models=models).batch.run(
            BatchOptions("dbpp", ("clip_i",))
        )
        assert summary.ratings_only == 12 and summary.scored_samples == 0 and not summary.failures
        assert "12 ratings-only samples have no images to score" in "\n".join(summary.lines())

        again = _import(store, ratings)
        assert (again.added_samples, again.added_ratings, again.added_metrics) == (0, 0, 0)
        assert (again.existing_samples, again.existing_ratings, again.existing_metrics) == (12, 48, 24)

        later = _import(store, images)
        assert later.problems == []
        assert (later.added_samples, later.completed_samples, later.existing_samples) == (0, 12, 12)
        after = {x.external_key: x for x in store.samples.list("dbpp")}
        assert store.samples.count("dbpp") == 12 and set(after) == set(before)
        assert all(after[k].id == before[k].id and not after[k].ratings_only for k in after)
        done = after["dreambooth_sd/object_03_red_backpack-1"]
        assert done.prompt == "prompt file 1 for object_03_red_backpack" and len(done.references) == 1
        assert (
            store.images.read(done.output)
            == (images / "samples/dreambooth_sd/tgt_image/object_03_red_backpack/1_0.png").read_bytes()
        )
        assert len(store.ratings.current(dataset="dbpp")) == 48  # the ratings stayed with their samples
        assert store.metrics.latest(done.id)["gpt4o_cp"].value == 2.0

        assert _import(store, images).completed_samples == 0  # a second time: nothing changes
        assert store.samples.count("dbpp") == 12
        assert store.tasks.next_task("alice", "dbpp") is not None
        scored = build_workbench(demo_settings, store=store, models=models).batch.run(BatchOptions("dbpp", ("clip_i",)))
        assert scored.ratings_only == 0 and scored.scored_samples == 12 and not scored.failures
        assert "ratings-only" not in "\n".join(scored.lines())


def test_images_first_then_ratings_only_tree_adds_no_samples(database_url, tmp_path):
    images = write_dreambench(tmp_path / "images", human=False, gpt=False)
    ratings = write_dreambench(tmp_path / "ratings", images=False, samples=False)
    with open_store(database_url, tmp_path / "data") as store:
        assert _import(store, images).added_samples == 12
        summary = _import(store, ratings)
        assert (summary.added_samples, summary.ratings_only_samples, summary.existing_samples) == (0, 0, 12)
        assert (summary.added_ratings, summary.added_metrics) == (48, 24)
        assert not any(s.ratings_only for s in store.samples.list("dbpp"))


def test_mixed_tree_makes_ratings_only_samples_for_outputs_not_there(database_url, tmp_path):
    import shutil

    root = write_dreambench(tmp_path / "t")
    shutil.rmtree(root / "samples/blip_diffusion")  # ratings of this method stay, its images are gone
    with open_store(database_url, tmp_path / "data") as store:
        summary = _import(store, root)
        assert summary.problems == [] and (summary.added_samples, summary.ratings_only_samples) == (12, 6)
        only = [s for s in store.samples.list("dbpp") if s.ratings_only]
        assert {s.method for s in only} == {"blip_diffusion"}
        assert len(store.ratings.current(dataset="dbpp")) == 48


def test_published_judge_values_keep_their_provenance_and_scale(database_url, tmp_path):
    """Imported without a judge name: `dbpp_cp` / `dbpp_pf` with model gpt-4o-2024-05-13 and the rubric template in
    their provenance; agreement maps them by their 0-4 scale, as the values the judge computes here."""
    from masc_ui.metrics.judges.dreambench import template

    ratings = write_dreambench(tmp_path / "ratings", images=False, samples=False)
    with open_store(database_url, tmp_path / "data") as store:
        summary = ingest(store, "dbpp", "dreambench", read_layout("dreambench", ratings))
        assert summary.problems == [] and summary.added_metrics == 24
        sample = {s.external_key: s for s in store.samples.list("dbpp")}["dreambooth_sd/object_03_red_backpack-1"]
        value = store.metrics.latest(sample.id)["dbpp_cp"]
        prov = value.provenance
        assert value.value == 2.0 and prov.model_id == "gpt-4o-2024-05-13" and prov.code_version == "external"
        assert prov.params["template_sha256"] == template("cp").sha256 and prov.params["scale"] == "rating"
        assert prov.params["range"] == [0.0, 4.0]
        data = load_agreement_data(store, "dbpp")
        assert data.scales["dbpp_cp"].kind == "rating" and data.scales["dbpp_cp"].value_range == (0.0, 4.0)
        assert agreement_table(data, None, "cp", n_boot=0).row("dbpp_cp").n == 12
        again = ingest(store, "dbpp", "dreambench", read_layout("dreambench", ratings))
        assert again.added_metrics == 0 and again.existing_metrics == 24
