"""What the ImagenHub notebook reports, shared by the analysis test (files) and the import test (database)."""

FIELDS = {  # EXPECTED key -> (criterion, attribute of CriterionSummary)
    "SC_avg": ("sc", "mean"),
    "PQ_avg": ("pq", "mean"),
    "O_avg": ("o", "mean"),
    "SC_kripp_alpha_ordinal": ("sc", "alpha_ordinal"),
    "PQ_kripp_alpha_ordinal": ("pq", "alpha_ordinal"),
    "O_kripp_alpha_ordinal": ("o", "alpha_ordinal"),
    "SC_fleiss_kappa": ("sc", "fleiss_kappa"),
}
# Printed by the notebook's cached outputs (not in the JSON): Fleiss kappa of SC, PR (= PQ) and HumanEval (= O).
NOTEBOOK_KAPPAS = {
    ("Multi-Subject_IG", "CustomDiffusion"): (0.83, 0.41, 0.73),
    ("Multi-Subject_IG", "DreamBooth"): (0.65, 0.69, 0.61),
    ("Multi-Subject_IG", "TextualInversion"): (0.73, 0.54, 0.62),
    ("Subject-Driven_IG", "BLIPDiffusion_Gen"): (0.23, 0.12, 0.22),
    ("Subject-Driven_IG", "DreamBooth"): (0.40, 0.39, 0.37),
    ("Subject-Driven_IG", "SuTI"): (0.30, 0.24, 0.20),
}
