module.exports = {
  displayName: 'devnet',
  preset: '../../jest.preset.js',
  rootDir: __dirname,
};
