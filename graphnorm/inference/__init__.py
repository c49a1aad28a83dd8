"""Using a trained model: checkpoints, predictions from SMILES, intervals and calibration, embeddings, and their CLI."""
