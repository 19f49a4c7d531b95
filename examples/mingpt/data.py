"""Character-level dataset over a text: fixed windows of ``block_size + 1`` characters."""
import torch
from torch.utils.data import Dataset


class CharDataset(Dataset):
    """Sample i is (x, y) = text[s : s+block], text[s+1 : s+block+1] with s = i * stride."""

    def __init__(self, text: str, block_size: int, stride: int):
        self.chars = sorted(set(text))
        self.stoi = {ch: i for i, ch in enumerate(self.chars)}
        self.data = torch.tensor([self.stoi[ch] for ch in text], dtype=torch.long)
        self.block_size = block_size
        self.stride = stride
        self.count = (len(self.data) - block_size - 1) // stride + 1
        if self.count <= 0:
            raise ValueError(f"text of {len(text)} chars is shorter than block_size+1")

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index: int):
        start = index * self.stride
        chunk = self.data[start : start + self.block_size + 1]
        return chunk[:-1], chunk[1:]
