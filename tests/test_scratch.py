from masc_ui.scratch import ScratchSpace


def test_folders_are_fresh_bounded_and_under_one_root():
    space = ScratchSpace(keep=2)
    a, b, c = (space.new_folder() for _ in range(3))
    assert len({a, b, c}) == 3 and all(f.parent == space.root for f in (a, b, c))
    assert not a.exists() and b.is_dir() and c.is_dir()
